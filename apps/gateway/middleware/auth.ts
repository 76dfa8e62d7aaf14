import type { RequestHandler, Response } from 'express';
import { parse as parseCookie } from 'cookie';
import { API_KEY_PATTERN, SESSION_COOKIE, hashToken } from '../../../core/auth/tokens';
import { AppError, UnauthorizedError } from '../../../core/errors/app-error';
import type { GatewayDeps } from '../deps';
import { setAuth } from '../http/auth-context';
import { rateLimitHeaders, type KeyLimit } from './rate-limit';

/** How stale `lastUsedAt` may be: one write per key per interval, not one per request. */
const LAST_USED_WRITE_INTERVAL_SECONDS = 60;
const BEARER = /^Bearer ([^\s]+)$/;

interface KeyCheck {
  id: string;
  userId: string;
  counters: { name: string; points: number; expire: string }[];
}

/**
 * Public routes: `Authorization: Bearer svck_live_…`, checked against the database on every
 * request, so a revoked key fails on its very next call. Session cookies are not accepted.
 * The key check, the route's rate-limit counters and the throttled `lastUsedAt` write are one
 * statement, so authentication costs one round trip. The counters keep rate-limiter-flexible's
 * fixed-window layout ("RateLimit": key, points, expire in epoch ms), so every gateway process
 * shares them, and a refused key counts nothing.
 */
export function apiKeyGuard(deps: GatewayDeps, limits: readonly KeyLimit[]): RequestHandler {
  const names = limits.map((l) => l.name);
  return async (req, res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) throw new UnauthorizedError('A valid API key is required.');
    const now = Date.now();
    // Named, so each pooled connection parses and plans it once.
    const { rows } = await deps.db.pool.query<KeyCheck>({
      name: 'api-key-check',
      text: `WITH k AS (
         SELECT id, "userId" FROM "ApiKey" WHERE "keyHash" = $1 AND "revokedAt" IS NULL
       ), used AS (
         UPDATE "ApiKey" a SET "lastUsedAt" = now() FROM k
          WHERE a.id = k.id AND (a."lastUsedAt" IS NULL OR a."lastUsedAt" < now() - make_interval(secs => $4))
       ), counted AS (
         INSERT INTO "RateLimit" AS r (key, points, expire)
         SELECT n.name || ':' || k.id, 1, $3::bigint + 60000 FROM k CROSS JOIN unnest($2::text[]) AS n(name)
         ON CONFLICT (key) DO UPDATE SET
           points = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN 1 ELSE r.points + 1 END,
           expire = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN excluded.expire ELSE r.expire END
         RETURNING split_part(key, ':', 1) AS name, points, expire
       )
       SELECT k.id, k."userId",
              COALESCE((SELECT jsonb_agg(counted) FROM counted), '[]'::jsonb) AS counters
         FROM k`,
      values: [hashToken(key), names, now, LAST_USED_WRITE_INTERVAL_SECONDS],
    });
    const row = rows[0];
    if (!row) throw new UnauthorizedError('The API key is invalid or revoked.');
    setAuth(req, { userId: row.userId, apiKeyId: row.id });
    applyLimits(res, limits, row.counters, now);
    next();
  };
}

/**
 * Sets the RateLimit headers of the tightest counter, and refuses with 429 when any counter is
 * over its limit.
 */
function applyLimits(
  res: Response,
  limits: readonly KeyLimit[],
  counters: KeyCheck['counters'],
  now: number,
) {
  let tightest: { limit: KeyLimit; remaining: number; resetSeconds: number } | undefined;
  for (const limit of limits) {
    const counter = counters.find((c) => c.name === limit.name);
    if (!counter) continue;
    const remaining = limit.perMinute - counter.points;
    const resetSeconds = Math.max(1, Math.ceil((Number(counter.expire) - now) / 1000));
    if (remaining < 0) {
      throw new AppError('RATE_LIMITED', limit.message, undefined, {
        'retry-after': String(resetSeconds),
        ...rateLimitHeaders(limit.perMinute, 0, resetSeconds),
      });
    }
    if (!tightest || remaining < tightest.remaining) tightest = { limit, remaining, resetSeconds };
  }
  if (tightest) {
    const headers = rateLimitHeaders(tightest.limit.perMinute, tightest.remaining, tightest.resetSeconds);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Management routes: the `svc_session` cookie. API keys are not accepted. A cookie-authenticated
 * write must come from our own origin: Sec-Fetch-Site, else Origin, must not say cross-site.
 */
export function sessionGuard(deps: GatewayDeps): RequestHandler {
  return async (req, _res, next) => {
    if (!SAFE_METHODS.has(req.method)) assertSameOrigin(req.headers, req.protocol, req.get('host'));
    const token = parseCookie(req.headers.cookie ?? '')[SESSION_COOKIE];
    if (!token) throw new UnauthorizedError('Sign in first.');
    const { rows } = await deps.db.pool.query<{ id: string; userId: string }>(
      'SELECT id, "userId" FROM "Session" WHERE "tokenHash" = $1 AND "expiresAt" > now()',
      [hashToken(token)],
    );
    const row = rows[0];
    if (!row) throw new UnauthorizedError('The session is invalid or expired.');
    setAuth(req, { userId: row.userId, sessionId: row.id });
    next();
  };
}

export function assertSameOrigin(
  headers: Record<string, string | string[] | undefined>,
  protocol: string,
  host: string | undefined,
): void {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') {
    if (site === 'same-origin' || site === 'none') return;
    throw new AppError('FORBIDDEN', 'Cross-site requests are refused.');
  }
  const origin = headers.origin;
  if (typeof origin !== 'string') return; // not a browser: no ambient-cookie risk to guard against
  if (host && origin === `${protocol}://${host}`) return;
  throw new AppError('FORBIDDEN', 'Cross-site requests are refused.');
}
