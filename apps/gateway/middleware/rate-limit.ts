import type { RequestHandler, Response } from 'express';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../../core/errors/app-error';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';

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
      ...rateLimitHeaders(limiter.points, rejection),
    });
  }
}

function rateLimitHeaders(limit: number, state: RateLimiterRes): Record<string, string> {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(state.remainingPoints),
    'ratelimit-reset': String(seconds(state.msBeforeNext)),
  };
}

function setRateLimitHeaders(res: Response, limit: number, state: RateLimiterRes): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(limit, state))) res.setHeader(name, value);
}

/** Per API key, per minute; runs after the apiKey guard, which sets the key id. */
function perKeyPerMinute(
  deps: GatewayDeps,
  keyPrefix: string,
  points: number,
  message: string,
): RequestHandler {
  const limiter = postgresLimiter(deps, { keyPrefix, points, durationSeconds: 60 });
  return async (req, res, next) => {
    const { apiKeyId } = currentAuth(req);
    if (!apiKeyId) throw new AppError('UNAUTHORIZED', 'A valid API key is required.');
    setRateLimitHeaders(res, points, await consumeOrThrow(limiter, apiKeyId, message));
    next();
  };
}

/** Every public call: `API_RATE_LIMIT_PER_MINUTE` per API key. */
export function apiRateLimit(deps: GatewayDeps): RequestHandler {
  return perKeyPerMinute(
    deps,
    'api',
    deps.config.API_RATE_LIMIT_PER_MINUTE,
    'Too many requests with this API key; retry later.',
  );
}

/** Sends (turns queued for the agent): `SEND_RATE_LIMIT_PER_MINUTE` per API key. */
export function sendRateLimit(deps: GatewayDeps): RequestHandler {
  return perKeyPerMinute(
    deps,
    'send',
    deps.config.SEND_RATE_LIMIT_PER_MINUTE,
    'Too many sends with this API key; retry later.',
  );
}
