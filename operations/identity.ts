import { createPasswordHasher, PasswordHasherBusyError } from '../core/auth/passwords';
import {
  API_KEY_PATTERN,
  API_KEY_SHOWN_PREFIX_LENGTH,
  hashToken,
  newApiKey,
  newSessionToken,
} from '../core/auth/tokens';
import { AppError, ConflictError, NotFoundError, UnauthorizedError } from '../core/errors/app-error';
import {
  checkApiKey,
  checkSession,
  deleteSession,
  deleteSessionsOfUser,
  insertApiKey,
  insertSession,
  insertUser,
  revokeApiKey,
  revokeApiKeysOfOtherSessions,
  selectApiKeys,
  selectSession,
  selectUser,
  selectUserByEmail,
} from '../core/identity/store';
import { revokeGrantsOfUser } from '../core/oauth/store';
import { SIGN_IN_LOCKOUT_MIN_MS } from '../core/config/config';
import { addressBucket } from '../core/net/address-bucket';
import { addressNetwork } from '../core/net/client-address';
import { page } from '../core/schemas/common';
import { toApiKeyDto, toUserDto } from '../core/schemas/identity';
import type { Page } from './chats';
import type { Caller, OperationDeps } from './deps';
import {
  consumeOrThrow,
  countedCall,
  limitReached,
  postgresLimiter,
  rateLimited,
  type UserLimit,
} from './limits';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { NotificationHub } from '../core/db/notification-hub';
import { createKeyMemory, leaseSize, tightest, type RateLimitState, type KeyCheckTicket } from './key-memory';

const SIGN_IN_WINDOW_SECONDS = SIGN_IN_LOCKOUT_MIN_MS / 1000;
const DAY_SECONDS = 24 * 3600;
const HOUR_SECONDS = 3600;
/** How long a successful sign-in makes its address known to the account (see signInByAccount). */
const KNOWN_ADDRESS_SECONDS = 30 * DAY_SECONDS;
const WRONG_CREDENTIALS = 'The email or password is wrong.';
const TOO_MANY_ATTEMPTS = 'Too many sign-in attempts; retry later.';
const TOO_MANY_SIGN_UPS = 'Too many sign-ups; retry later.';
/** How long a client waits when every hashing slot is taken: a hash takes well under a second. */
const HASHER_BUSY_RETRY_SECONDS = 1;

type UserDto = ReturnType<typeof toUserDto>;
type ApiKeyDto = ReturnType<typeof toApiKeyDto>;

/** What a session is looked up by: its token's hash; 401 without a token. */
function sessionTokenHash(token: string | undefined): string {
  if (!token) throw new UnauthorizedError('Sign in first.');
  return hashToken(token);
}

/** Accounts, sessions and API keys. */
export function createIdentityOperations(deps: OperationDeps, hub: NotificationHub) {
  const { config, db } = deps;
  const memory = createKeyMemory(hub);
  // Every per-address limit counts a client as addressBucket does: an IPv4 address, an IPv6 /64.
  // Keyed by address, one client trying many accounts is throttled. Keyed by (account, address),
  // one client guessing at one account is locked out, with a backoff, while the owner signing in
  // from elsewhere is not: a lockout cannot be used to lock a victim out of their own account.
  const limiter = (keyPrefix: string, points: number, durationSeconds: number) =>
    postgresLimiter(db, { keyPrefix, points, durationSeconds });
  const signInByIp = limiter('sign-in-ip', config.SIGN_IN_ATTEMPTS_PER_15_MINUTES, SIGN_IN_WINDOW_SECONDS);
  const signInByAccountIp = limiter(
    'sign-in-account-ip',
    config.SIGN_IN_ATTEMPTS_PER_15_MINUTES,
    SIGN_IN_WINDOW_SECONDS,
  );
  const maxLockoutSeconds = Math.floor(config.SIGN_IN_LOCKOUT_MAX / 1000);
  // How many lockouts a pair had in the last day (or the cap, if longer, so that a lockout at the
  // cap is still remembered when it ends): each doubles the next.
  const lockouts = limiter(
    'sign-in-lockouts',
    Number.MAX_SAFE_INTEGER,
    Math.max(DAY_SECONDS, maxLockoutSeconds),
  );
  // The slow ceiling, whatever the addresses: failed sign-ins to one account from addresses it was
  // never signed in from. Past it such an address is refused before its password is checked, so
  // a guess there learns nothing; the addresses the owner signed in from lately (knownSignIns) are
  // neither counted nor refused, so the owner is not locked out by it at home or at work.
  const signInByAccount = limiter(
    'sign-in-account',
    config.SIGN_IN_FAILURES_PER_ACCOUNT_PER_HOUR,
    HOUR_SECONDS,
  );
  const knownSignIns = limiter('sign-in-known', 1, KNOWN_ADDRESS_SECONDS);
  // Enumerating accounts by sign-up's 409 EMAIL_TAKEN is held to about sign-in's pace, per address,
  // per IPv6 network and over all addresses; each in turn, so what one address or network floods
  // is stopped by its own limit before it counts against the next.
  const signUpByIp = limiter('sign-up-ip', config.SIGN_UP_RATE_LIMIT_PER_HOUR, HOUR_SECONDS);
  const signUpByNetwork = limiter(
    'sign-up-network',
    config.SIGN_UP_RATE_LIMIT_PER_NETWORK_PER_HOUR,
    HOUR_SECONDS,
  );
  const signUpOverall = limiter('sign-up-all', config.SIGN_UP_RATE_LIMIT_OVERALL_PER_HOUR, HOUR_SECONDS);
  const passwords = createPasswordHasher({
    concurrency: config.PASSWORD_HASH_CONCURRENCY,
    queue: config.PASSWORD_HASH_QUEUE,
  });

  /** authenticateApiKey's check in PostgreSQL, under its ticket (see key-memory.ts). */
  async function checkAndCount(
    keyHash: string,
    limits: readonly UserLimit[],
    via: Caller['via'],
    ticket: KeyCheckTicket,
    now: number,
  ): Promise<{ caller: Caller; rateLimit?: RateLimitState }> {
    // Points this gateway leased count the call where they can; the rest is counted in the check.
    const local = memory.spend(keyHash, limits, now, { all: false })?.counters ?? new Map();
    const counted = limits.filter((l) => !local.has(l.name));
    const asked = counted.map((l) => ({ name: l.name, points: leaseSize(l.perMinute, ticket.leasing) }));
    const row = await checkApiKey(db, { keyHash, counters: asked, now });
    if (!row) throw new UnauthorizedError('The API key is invalid or revoked.');
    const { states, leases, refusal } = countedCall(counted, asked, row.counters, now);
    memory.remember(ticket, keyHash, { userId: row.userId, apiKeyId: row.id }, leases, now);
    if (refusal) throw refusal;
    const rateLimit = tightest([...local.values(), ...states]);
    return { caller: { userId: row.userId, apiKeyId: row.id, via }, ...(rateLimit ? { rateLimit } : {}) };
  }

  async function hashing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof PasswordHasherBusyError)) throw err;
      throw new AppError('SERVICE_UNAVAILABLE', 'The service is busy; retry in a moment.', undefined, {
        'retry-after': String(HASHER_BUSY_RETRY_SECONDS),
      });
    }
  }

  /** Counts a failed attempt of the pair; the one that passes the limit starts a longer lockout. */
  async function consumeAccountAttempt(pairKey: string): Promise<void> {
    try {
      await signInByAccountIp.consume(pairKey);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      let waitMs = rejection.msBeforeNext;
      if (rejection.consumedPoints === signInByAccountIp.points + 1) {
        const { consumedPoints: nth } = await lockouts.consume(pairKey);
        const seconds = Math.min(SIGN_IN_WINDOW_SECONDS * 2 ** (nth - 1), maxLockoutSeconds);
        await signInByAccountIp.block(pairKey, seconds);
        waitMs = seconds * 1000;
      }
      throw rateLimited(
        TOO_MANY_ATTEMPTS,
        signInByAccountIp.points,
        0,
        Math.max(1, Math.ceil(waitMs / 1000)),
      );
    }
  }

  return {
    async signUp(input: { email: string; password: string }, clientAddress: string): Promise<UserDto> {
      if (!config.ALLOW_SIGN_UP) throw new AppError('FORBIDDEN', 'Sign-up is disabled.');
      await consumeOrThrow(signUpByIp, addressBucket(clientAddress), TOO_MANY_SIGN_UPS);
      const network = addressNetwork(clientAddress);
      if (network) await consumeOrThrow(signUpByNetwork, network, TOO_MANY_SIGN_UPS);
      try {
        await consumeOrThrow(signUpOverall, 'all', TOO_MANY_SIGN_UPS);
      } catch (err) {
        // Every sign-up is refused now, whoever asks: the operator should know.
        if (err instanceof AppError && err.code === 'RATE_LIMITED')
          deps.logger.warn('SIGN_UP_RATE_LIMIT_OVERALL_PER_HOUR reached: sign-ups are refused for now');
        throw err;
      }
      const user = await insertUser(db, {
        email: input.email,
        passwordHash: await hashing(() => passwords.hash(input.password)),
        creditGrant: config.CREDIT_GRANT_ON_SIGN_UP,
      });
      if (!user) throw new ConflictError('EMAIL_TAKEN', 'An account with this email already exists.');
      return toUserDto(user);
    },

    /** A new session for the account; its token goes in the cookie and is stored hashed only. */
    async signIn(
      input: { email: string; password: string },
      clientAddress: string,
    ): Promise<{ user: UserDto; token: string; maxAgeSeconds: number }> {
      const address = addressBucket(clientAddress);
      // Hashed: a key fits the table's varchar(255) whatever the email, and no email is stored there.
      const pairKey = hashToken(`${input.email}\n${address}`);
      const accountKey = hashToken(input.email);
      // The pair first: its lockout, not the address's window, is what the backoff lengthens.
      await consumeAccountAttempt(pairKey);
      await consumeOrThrow(signInByIp, address, TOO_MANY_ATTEMPTS);
      const known = (await knownSignIns.get(pairKey)) !== null;
      if (!known) await consumeOrThrow(signInByAccount, accountKey, TOO_MANY_ATTEMPTS);
      const user = await selectUserByEmail(db, input.email);
      const passwordMatches = await hashing(() => passwords.verify(user?.passwordHash, input.password));
      if (!user || !passwordMatches) throw new UnauthorizedError(WRONG_CREDENTIALS);
      // Only failures should count: the owner's earlier typos (and lockouts) are forgotten, and a
      // shared address (an office behind one NAT) is not locked out by its members signing in.
      await Promise.all([
        signInByAccountIp.delete(pairKey),
        lockouts.delete(pairKey),
        signInByIp.reward(address),
        ...(known ? [] : [signInByAccount.reward(accountKey)]),
        knownSignIns.set(pairKey, 1, KNOWN_ADDRESS_SECONDS),
      ]);
      const token = newSessionToken();
      const maxAgeSeconds = Math.floor(config.SESSION_TTL / 1000);
      await insertSession(db, user.id, hashToken(token), maxAgeSeconds);
      return { user: toUserDto(user), token, maxAgeSeconds };
    },

    async signOut(caller: Caller): Promise<void> {
      if (caller.sessionId) await deleteSession(db, caller.sessionId);
    },

    /**
     * Undoes what a stolen session could have left behind: every OAuth grant of the user ends (each
     * was consented to by some session), so does every API key created in a session other than
     * the caller's (keys from before sessions were recorded included), and then every session,
     * the caller's too. Keys and grants go first: should the call fail midway, the session that
     * asked still works to ask again.
     */
    async signOutEverywhere(caller: Caller): Promise<void> {
      await revokeApiKeysOfOtherSessions(db, caller.userId, caller.sessionId ?? null);
      memory.forget();
      await revokeGrantsOfUser(db.pool, caller.userId);
      await deleteSessionsOfUser(db, caller.userId);
    },

    async currentUser(caller: Caller): Promise<UserDto> {
      return toUserDto(await selectUser(db, caller.userId));
    },

    /** The full key is in this answer only; the database keeps its SHA-256. */
    async createApiKey(caller: Caller, input: { name: string }): Promise<ApiKeyDto & { key: string }> {
      const key = newApiKey();
      const row = await insertApiKey(
        db,
        {
          userId: caller.userId,
          name: input.name,
          prefix: key.slice(0, API_KEY_SHOWN_PREFIX_LENGTH),
          keyHash: hashToken(key),
          sessionId: caller.sessionId ?? null,
        },
        config.MAX_API_KEYS_PER_USER,
      );
      if (!row) throw limitReached('MAX_API_KEYS_PER_USER', config.MAX_API_KEYS_PER_USER, 'API keys');
      return { ...toApiKeyDto(row), key };
    },

    async listApiKeys(caller: Caller, query: { limit: number; cursor?: string }): Promise<Page<ApiKeyDto>> {
      const rows = await selectApiKeys(db, caller.userId, query);
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return { data: data.map(toApiKeyDto), nextCursor };
    },

    async revokeApiKey(caller: Caller, keyId: string): Promise<void> {
      if (!(await revokeApiKey(db, caller.userId, keyId)))
        throw new NotFoundError('KEY_NOT_FOUND', 'No such API key.');
      // Every gateway forgets it when the notification comes; this one before it answers.
      memory.forget();
    },

    /**
     * The caller of an API key, checked against the database (a revoked key fails on its very next
     * call), after counting the call against each of `limits`: 401 for a bad key, 429 past any
     * limit. Answers the tightest counter's state for the RateLimit headers. A counter with points
     * this gateway leased counts the call from them; the others give it a lease for later calls
     * (key-memory.ts), which leasedCaller spends too.
     */
    async authenticateApiKey(
      key: string | undefined,
      limits: readonly UserLimit[],
      via: Caller['via'],
    ): Promise<{ caller: Caller; rateLimit?: RateLimitState }> {
      if (!key || !API_KEY_PATTERN.test(key)) throw new UnauthorizedError('A valid API key is required.');
      const now = Date.now();
      const keyHash = hashToken(key);
      const ticket = memory.beginCheck(keyHash);
      try {
        return await checkAndCount(keyHash, limits, via, ticket, now);
      } finally {
        memory.endCheck(keyHash, ticket);
      }
    },

    /**
     * The caller of an API key this gateway checked lately, its call counted against points it
     * leased of each of `limits` (see authenticateApiKey), without a round trip; undefined
     * when it has not got them all, and the key is then to be checked with authenticateApiKey.
     * Rests on every gateway hearing of a revocation at its commit, as rememberedCaller does.
     */
    leasedCaller(
      key: string | undefined,
      limits: readonly UserLimit[],
      via: Caller['via'],
    ): { caller: Caller; rateLimit?: RateLimitState } | undefined {
      if (!key) return undefined;
      const spent = memory.spend(hashToken(key), limits, Date.now(), { all: true });
      if (!spent) return undefined;
      const rateLimit = tightest([...spent.counters.values()]);
      return { caller: { ...spent.key, via }, ...(rateLimit ? { rateLimit } : {}) };
    },

    /**
     * The caller of an API key this gateway checked lately, if it is still good (see
     * key-memory.ts); else undefined, and the caller is to be checked with authenticateApiKey.
     * Counts nothing: only an answer given from memory, which reads nothing, may rest on it.
     */
    rememberedCaller(key: string | undefined, via: Caller['via']): Caller | undefined {
      if (!key) return undefined;
      const known = memory.caller(hashToken(key), Date.now());
      return known ? { ...known, via } : undefined;
    },

    /**
     * Who a session token belongs to, or null for none, an expired or a revoked one: the
     * console's first question, which a signed-out visitor answers too (with nobody).
     */
    async sessionUser(token: string | undefined): Promise<UserDto | null> {
      const session = token ? await selectSession(db, sessionTokenHash(token)) : undefined;
      return session ? toUserDto(await selectUser(db, session.userId)) : null;
    },

    /** The caller of a session cookie's token (the management routes: nothing is counted). */
    async authenticateSession(token: string | undefined, via: Caller['via']): Promise<Caller> {
      const session = await selectSession(db, sessionTokenHash(token));
      if (!session) throw new UnauthorizedError('The session is invalid or expired.');
      return { userId: session.userId, sessionId: session.id, via };
    },

    /**
     * The caller of a session cookie's token, for the console's calls of the public routes: counted
     * against `limits`, the user's counters that their API keys and OAuth grants count against
     * too (429 past any). One statement, as an API key's check is.
     */
    async authenticateSessionCall(
      token: string | undefined,
      limits: readonly UserLimit[],
      via: Caller['via'],
    ): Promise<{ caller: Caller; rateLimit?: RateLimitState }> {
      const now = Date.now();
      const asked = limits.map((l) => ({ name: l.name, points: 1 }));
      const session = await checkSession(db, { tokenHash: sessionTokenHash(token), counters: asked, now });
      if (!session) throw new UnauthorizedError('The session is invalid or expired.');
      const { states, refusal } = countedCall(limits, asked, session.counters, now);
      if (refusal) throw refusal;
      const rateLimit = tightest(states);
      return {
        caller: { userId: session.userId, sessionId: session.id, via },
        ...(rateLimit ? { rateLimit } : {}),
      };
    },
  };
}

export type IdentityOperations = ReturnType<typeof createIdentityOperations>;
