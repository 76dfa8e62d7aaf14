import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../../core/errors/app-error';
import type { GatewayDeps } from '../deps';

/**
 * A limiter whose counters live in PostgreSQL ("RateLimit", created by the migration), so a limit
 * holds across every gateway process rather than per process.
 */
export function postgresLimiter(
  deps: GatewayDeps,
  options: { keyPrefix: string; points: number; durationSeconds: number },
): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: deps.db.pool,
    storeType: 'pool',
    tableName: 'RateLimit',
    tableCreated: true,
    keyPrefix: options.keyPrefix,
    points: options.points,
    duration: options.durationSeconds,
  });
}

/** A per-key, per-minute counter consumed by a public route; see apiKeyGuard. */
export interface KeyLimit {
  /** Names the counter: `<name>:<api key id>` in "RateLimit". */
  name: string;
  perMinute: number;
  message: string;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Consumes one point; over the limit it throws 429 with `Retry-After`. Store failures propagate. */
export async function consumeOrThrow(
  limiter: RateLimiterPostgres,
  key: string,
  message: string,
): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    throw new AppError('RATE_LIMITED', message, undefined, {
      'retry-after': String(seconds(rejection.msBeforeNext)),
      ...rateLimitHeaders(limiter.points, rejection.remainingPoints, seconds(rejection.msBeforeNext)),
    });
  }
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

/** Every public call: `API_RATE_LIMIT_PER_MINUTE` per API key. */
export function apiLimit(deps: GatewayDeps): KeyLimit {
  return {
    name: 'api',
    perMinute: deps.config.API_RATE_LIMIT_PER_MINUTE,
    message: 'Too many requests with this API key; retry later.',
  };
}

/** Sends (turns queued for the agent): `SEND_RATE_LIMIT_PER_MINUTE` per API key. */
export function sendLimit(deps: GatewayDeps): KeyLimit {
  return {
    name: 'send',
    perMinute: deps.config.SEND_RATE_LIMIT_PER_MINUTE,
    message: 'Too many sends with this API key; retry later.',
  };
}
