import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../core/config/config';
import type { Database } from '../core/db/client';
import { AppError } from '../core/errors/app-error';
import { countUserCalls, type CounterAsk, type CounterRow } from '../core/identity/store';
import { takePoints, tightest, type Lease, type RateLimitState } from './key-memory';

/**
 * A per-user, per-minute counter a public call consumes, counted when its caller is
 * authenticated: the same counter whichever credential the user comes with (any of their API
 * keys, the console's session, an OAuth grant) and whichever transport (REST, the console's
 * mirror, MCP), so no key, grant or route multiplies a user's limit.
 */
export interface UserLimit {
  /** Names the counter: `<name>:<user id>` in "RateLimit". */
  name: string;
  perMinute: number;
  message: string;
}

export interface UserLimits {
  /** Every public call: `API_RATE_LIMIT_PER_MINUTE` per user. */
  api: UserLimit;
  /** Sends (turns queued for the agent): `SEND_RATE_LIMIT_PER_MINUTE` per user. */
  send: UserLimit;
}

export function userLimits(config: Config): UserLimits {
  return {
    api: {
      name: 'api',
      perMinute: config.API_RATE_LIMIT_PER_MINUTE,
      message: 'Too many requests for this account; retry later.',
    },
    send: {
      name: 'send',
      perMinute: config.SEND_RATE_LIMIT_PER_MINUTE,
      message: 'Too many sends for this account; retry later.',
    },
  };
}

export function rateLimitHeaders(
  limit: number,
  remaining: number,
  resetSeconds: number,
): Record<string, string> {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(resetSeconds),
  };
}

/** 429 RATE_LIMITED with `Retry-After` and the RateLimit headers. */
export function rateLimited(
  message: string,
  limit: number,
  remaining: number,
  resetSeconds: number,
): AppError {
  return new AppError('RATE_LIMITED', message, undefined, {
    'retry-after': String(resetSeconds),
    ...rateLimitHeaders(limit, remaining, resetSeconds),
  });
}

/**
 * A limiter whose counters live in PostgreSQL ("RateLimit", created by the migration), so a limit
 * holds across every gateway process rather than per process.
 */
export function postgresLimiter(
  db: Database,
  options: { keyPrefix: string; points: number; durationSeconds: number },
): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: db.pool,
    storeType: 'pool',
    tableName: 'RateLimit',
    tableCreated: true,
    keyPrefix: options.keyPrefix,
    points: options.points,
    duration: options.durationSeconds,
  });
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Consumes one point; over the limit it throws 429. Store failures propagate. */
export async function consumeOrThrow(
  limiter: RateLimiterPostgres,
  key: string,
  message: string,
): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw rateLimited(message, limiter.points, rejection.remainingPoints, seconds(rejection.msBeforeNext));
  }
}

/** 422 LIMIT_REACHED: a per-user cap (its setting named in `details`) stops a creation. */
export function limitReached(setting: string, max: number, what: string): AppError {
  return new AppError(
    'LIMIT_REACHED',
    `You already have ${max} ${what}, the most allowed; remove one first.`,
    [{ path: setting, message: `at most ${max} ${what} per user` }],
  );
}

/**
 * What `Retry-After` suggests to a user at an active cap: a slot frees when one of their runs or
 * calls ends, which no clock can tell; a few seconds keeps a polling client cheap.
 */
const ACTIVE_LIMIT_RETRY_AFTER_SECONDS = 5;

/** 429 ACTIVE_LIMIT: the user's work in progress is at its cap (its setting named in `details`). */
export function activeLimit(setting: string, max: number, what: string): AppError {
  return new AppError(
    'ACTIVE_LIMIT',
    `You already have ${max} ${what} in progress, the most allowed; retry when one has finished.`,
    [{ path: setting, message: `at most ${max} ${what} in progress per user` }],
    { 'retry-after': String(ACTIVE_LIMIT_RETRY_AFTER_SECONDS) },
  );
}

/**
 * A call counted in PostgreSQL against each of `limits` (asked for `asked` points each): the state
 * of each counter, and the leases taken beyond the call's own point. Past any limit, `refusal` is
 * the first refusing counter's 429 RATE_LIMITED, for the caller to throw once it has kept what the
 * check taught it. Every credential's count of its user's calls ends here.
 */
export function countedCall(
  limits: readonly UserLimit[],
  asked: readonly CounterAsk[],
  rows: readonly CounterRow[],
  now: number,
): { states: RateLimitState[]; leases: Map<string, Lease>; refusal?: AppError } {
  const states: RateLimitState[] = [];
  const leases = new Map<string, Lease>();
  let refusal: { limit: UserLimit; state: RateLimitState } | undefined;
  for (const limit of limits) {
    const counter = rows.find((c) => c.name === limit.name);
    const granted = asked.find((a) => a.name === limit.name)?.points;
    if (!counter || granted === undefined) continue;
    const taken = takePoints(limit, { points: counter.points, expire: Number(counter.expire) }, granted, now);
    states.push(taken.state);
    if (taken.lease) leases.set(limit.name, taken.lease);
    if (taken.refused) refusal ??= { limit, state: taken.state };
  }
  if (!refusal) return { states, leases };
  const { limit, state } = refusal;
  return { states, leases, refusal: rateLimited(limit.message, limit.perMinute, 0, state.resetSeconds) };
}

/**
 * Counts a call of a credential checked on its own (an OAuth access token) against its user's
 * counters, one point each; 429 past any. The tightest counter's state, for the RateLimit headers.
 */
export async function countCalls(
  db: Database,
  userId: string,
  limits: readonly UserLimit[],
): Promise<RateLimitState | undefined> {
  if (limits.length === 0) return undefined;
  const now = Date.now();
  const asked = limits.map((l) => ({ name: l.name, points: 1 }));
  const { states, refusal } = countedCall(
    limits,
    asked,
    await countUserCalls(db, { userId, counters: asked, now }),
    now,
  );
  if (refusal) throw refusal;
  return tightest(states);
}
