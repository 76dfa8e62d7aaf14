import { hashPassword, verifyPassword } from '../core/auth/passwords';
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
  deleteSession,
  insertApiKey,
  insertSession,
  insertUser,
  revokeApiKey,
  selectApiKeys,
  selectSession,
  selectUser,
  selectUserByEmail,
} from '../core/identity/store';
import { toApiKeyDto, toUserDto } from '../core/schemas/identity';
import type { Page } from './chats';
import type { Caller, OperationDeps } from './deps';
import { consumeOrThrow, postgresLimiter, rateLimited, type KeyLimit } from './limits';

const SIGN_IN_WINDOW_SECONDS = 15 * 60;
const WRONG_CREDENTIALS = 'The email or password is wrong.';
const TOO_MANY_ATTEMPTS = 'Too many sign-in attempts; retry later.';

type UserDto = ReturnType<typeof toUserDto>;
type ApiKeyDto = ReturnType<typeof toApiKeyDto>;

/** What a call's counters stand at: for the RateLimit headers of its answer. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Accounts, sessions and API keys. */
export function createIdentityOperations(deps: OperationDeps) {
  const { config, db } = deps;
  // Keyed by email, a distributed guess at one account is throttled; keyed by IP, one client
  // trying many accounts is.
  const signInByEmail = postgresLimiter(db, {
    keyPrefix: 'sign-in-email',
    points: config.SIGN_IN_ATTEMPTS_PER_15_MINUTES,
    durationSeconds: SIGN_IN_WINDOW_SECONDS,
  });
  const signInByIp = postgresLimiter(db, {
    keyPrefix: 'sign-in-ip',
    points: config.SIGN_IN_ATTEMPTS_PER_15_MINUTES,
    durationSeconds: SIGN_IN_WINDOW_SECONDS,
  });

  return {
    async signUp(input: { email: string; password: string }): Promise<UserDto> {
      if (!config.ALLOW_SIGN_UP) throw new AppError('FORBIDDEN', 'Sign-up is disabled.');
      const user = await insertUser(db, input.email, await hashPassword(input.password));
      if (!user) throw new ConflictError('EMAIL_TAKEN', 'An account with this email already exists.');
      return toUserDto(user);
    },

    /** A new session for the account; its token goes in the cookie and is stored hashed only. */
    async signIn(
      input: { email: string; password: string },
      clientAddress: string,
    ): Promise<{ user: UserDto; token: string; maxAgeSeconds: number }> {
      // Hashed: a key fits the table's varchar(255) whatever the email, and no email is stored there.
      const emailKey = hashToken(input.email);
      await consumeOrThrow(signInByIp, clientAddress, TOO_MANY_ATTEMPTS);
      await consumeOrThrow(signInByEmail, emailKey, TOO_MANY_ATTEMPTS);
      const user = await selectUserByEmail(db, input.email);
      const passwordMatches = await verifyPassword(user?.passwordHash, input.password);
      if (!user || !passwordMatches) throw new UnauthorizedError(WRONG_CREDENTIALS);
      // Only failures should count: the owner's earlier typos are forgotten, and a shared address
      // (an office behind one NAT) is not locked out by its members signing in.
      await Promise.all([signInByEmail.delete(emailKey), signInByIp.reward(clientAddress)]);
      const token = newSessionToken();
      const maxAgeSeconds = Math.floor(config.SESSION_TTL / 1000);
      await insertSession(db, user.id, hashToken(token), maxAgeSeconds);
      return { user: toUserDto(user), token, maxAgeSeconds };
    },

    async signOut(caller: Caller): Promise<void> {
      if (caller.sessionId) await deleteSession(db, caller.sessionId);
    },

    async currentUser(caller: Caller): Promise<UserDto> {
      return toUserDto(await selectUser(db, caller.userId));
    },

    /** The full key is in this answer only; the database keeps its SHA-256. */
    async createApiKey(caller: Caller, input: { name: string }): Promise<ApiKeyDto & { key: string }> {
      const key = newApiKey();
      const row = await insertApiKey(db, {
        userId: caller.userId,
        name: input.name,
        prefix: key.slice(0, API_KEY_SHOWN_PREFIX_LENGTH),
        keyHash: hashToken(key),
      });
      return { ...toApiKeyDto(row), key };
    },

    async listApiKeys(caller: Caller): Promise<Page<ApiKeyDto>> {
      return { data: (await selectApiKeys(db, caller.userId)).map(toApiKeyDto), nextCursor: null };
    },

    async revokeApiKey(caller: Caller, keyId: string): Promise<void> {
      if (!(await revokeApiKey(db, caller.userId, keyId)))
        throw new NotFoundError('KEY_NOT_FOUND', 'No such API key.');
    },

    /**
     * The caller of an API key, checked against the database on every call (a revoked key fails
     * on its very next call), after counting the call against each of `limits`: 401 for a bad key,
     * 429 past any limit. Answers the tightest counter's state for the RateLimit headers.
     */
    async authenticateApiKey(
      key: string | undefined,
      limits: readonly KeyLimit[],
      via: Caller['via'],
    ): Promise<{ caller: Caller; rateLimit?: RateLimitState }> {
      if (!key || !API_KEY_PATTERN.test(key)) throw new UnauthorizedError('A valid API key is required.');
      const now = Date.now();
      const row = await checkApiKey(db, {
        keyHash: hashToken(key),
        counters: limits.map((l) => l.name),
        now,
      });
      if (!row) throw new UnauthorizedError('The API key is invalid or revoked.');
      let tightest: RateLimitState | undefined;
      for (const limit of limits) {
        const counter = row.counters.find((c) => c.name === limit.name);
        if (!counter) continue;
        const remaining = limit.perMinute - counter.points;
        const resetSeconds = Math.max(1, Math.ceil((Number(counter.expire) - now) / 1000));
        if (remaining < 0) throw rateLimited(limit.message, limit.perMinute, 0, resetSeconds);
        if (!tightest || remaining < tightest.remaining)
          tightest = { limit: limit.perMinute, remaining, resetSeconds };
      }
      return {
        caller: { userId: row.userId, apiKeyId: row.id, via },
        ...(tightest ? { rateLimit: tightest } : {}),
      };
    },

    /** The caller of a session cookie's token. */
    async authenticateSession(token: string | undefined, via: Caller['via']): Promise<Caller> {
      if (!token) throw new UnauthorizedError('Sign in first.');
      const session = await selectSession(db, hashToken(token));
      if (!session) throw new UnauthorizedError('The session is invalid or expired.');
      return { userId: session.userId, sessionId: session.id, via };
    },
  };
}

export type IdentityOperations = ReturnType<typeof createIdentityOperations>;
