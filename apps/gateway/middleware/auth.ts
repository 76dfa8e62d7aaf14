import type { RequestHandler } from 'express';
import { parse as parseCookie } from 'cookie';
import { SESSION_COOKIE } from '../../../core/auth/tokens';
import { AppError } from '../../../core/errors/app-error';
import type { Operations } from '../../../operations';
import { rateLimitHeaders, type KeyLimit } from '../../../operations/limits';
import { setAuth } from '../http/auth-context';

const BEARER = /^Bearer ([^\s]+)$/;

/**
 * Public routes: `Authorization: Bearer svck_live_…` (session cookies are not accepted), counted
 * against the route's per-key limits; the tightest counter's RateLimit headers go on the answer.
 */
export function apiKeyGuard(ops: Operations, limits: readonly KeyLimit[]): RequestHandler {
  return async (req, res, next) => {
    const key = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const { caller, rateLimit } = await ops.identity.authenticateApiKey(key, limits, 'rest');
    setAuth(req, caller);
    if (rateLimit) {
      for (const [name, value] of Object.entries(
        rateLimitHeaders(rateLimit.limit, rateLimit.remaining, rateLimit.resetSeconds),
      ))
        res.setHeader(name, value);
    }
    next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Management routes: the `svc_session` cookie. API keys are not accepted. A cookie-authenticated
 * write must come from our own origin: Sec-Fetch-Site, else Origin, must not say cross-site.
 */
export function sessionGuard(ops: Operations): RequestHandler {
  return async (req, _res, next) => {
    if (!SAFE_METHODS.has(req.method)) assertSameOrigin(req.headers, req.protocol, req.get('host'));
    const token = parseCookie(req.headers.cookie ?? '')[SESSION_COOKIE];
    setAuth(req, await ops.identity.authenticateSession(token, 'rest'));
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
