import type { RequestHandler } from 'express';
import { parse as parseCookie } from 'cookie';
import { API_KEY_PATTERN, SESSION_COOKIE, hashToken } from '../../../core/auth/tokens';
import { AppError, UnauthorizedError } from '../../../core/errors/app-error';
import type { GatewayDeps } from '../deps';
import { setAuth } from '../http/auth-context';

/** How stale `lastUsedAt` may be: one write per key per interval, not one per request. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const BEARER = /^Bearer ([^\s]+)$/;

/**
 * Public routes: `Authorization: Bearer svck_live_…`, checked against the database on every
 * request, so a revoked key fails on its very next call. Session cookies are not accepted.
 */
export function apiKeyGuard(deps: GatewayDeps): RequestHandler {
  const lastWritten = new Map<string, number>();
  return async (req, _res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) throw new UnauthorizedError('A valid API key is required.');
    const { rows } = await deps.db.pool.query<{ id: string; userId: string }>(
      'SELECT id, "userId" FROM "ApiKey" WHERE "keyHash" = $1 AND "revokedAt" IS NULL',
      [hashToken(key)],
    );
    const row = rows[0];
    if (!row) throw new UnauthorizedError('The API key is invalid or revoked.');
    setAuth(req, { userId: row.userId, apiKeyId: row.id });
    const now = Date.now();
    if (now - (lastWritten.get(row.id) ?? 0) > LAST_USED_WRITE_INTERVAL_MS) {
      lastWritten.set(row.id, now);
      deps.db.pool
        .query('UPDATE "ApiKey" SET "lastUsedAt" = now() WHERE id = $1', [row.id])
        .catch((err: Error) => req.log.warn({ err }, 'lastUsedAt update failed'));
    }
    next();
  };
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
