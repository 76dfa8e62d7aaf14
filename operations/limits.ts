import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../core/config/config';
import type { Database } from '../core/db/client';
import { AppError } from '../core/errors/app-error';

/**
 * A per-key, per-minute counter a public call consumes (see authenticateApiKey); the same
 * counters whichever transport the key comes through, REST or MCP.
 */
export interface KeyLimit {
  /** Names the counter: `<name>:<api key id>` in "RateLimit". */
  name: string;
  perMinute: number;
  message: string;
}

export interface KeyLimits {
  /** Every public call: `API_RATE_LIMIT_PER_MINUTE` per API key. */
  api: KeyLimit;
  /** Sends (turns queued for the agent): `SEND_RATE_LIMIT_PER_MINUTE` per API key. */
  send: KeyLimit;
}

export function keyLimits(config: Config): KeyLimits {
  return {
    api: {
      name: 'api',
      perMinute: config.API_RATE_LIMIT_PER_MINUTE,
      message: 'Too many requests with this API key; retry later.',
    },
    send: {
      name: 'send',
      perMinute: config.SEND_RATE_LIMIT_PER_MINUTE,
      message: 'Too many sends with this API key; retry later.',
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
