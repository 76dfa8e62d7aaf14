import type { Request, RequestHandler, Response } from 'express';
import { parse as parseCookie } from 'cookie';
import { sessionCookieName } from '../../../core/auth/tokens';
import { AppError, UnauthorizedError } from '../../../core/errors/app-error';
import type { Caller, Operations } from '../../../operations';
import type { RateLimitState } from '../../../operations/key-memory';
import { rateLimitHeaders, type KeyLimit } from '../../../operations/limits';
import { setAuth, setRememberedAuth } from '../http/auth-context';

const BEARER = /^Bearer ([^\s]+)$/;

/** The token of `Authorization: Bearer …`, if the header has that form. */
export const bearerToken = (req: Request): string | undefined =>
  BEARER.exec(req.headers.authorization ?? '')?.[1];

/**
 * The caller of `Authorization: Bearer svck_live_…` (session cookies are not accepted), counted
 * against `limits`; the tightest counter's RateLimit headers go on the answer. REST and MCP alike.
 */
export async function bearerCaller(
  ops: Operations,
  req: Request,
  res: Response,
  limits: readonly KeyLimit[],
  via: Caller['via'],
): Promise<Caller> {
  const { caller, rateLimit } = await ops.identity.authenticateApiKey(bearerToken(req), limits, via);
  setRateLimitHeaders(res, rateLimit);
  return caller;
}

function setRateLimitHeaders(res: Response, rateLimit: RateLimitState | undefined): void {
  if (!rateLimit) return;
  for (const [name, value] of Object.entries(
    rateLimitHeaders(rateLimit.limit, rateLimit.remaining, rateLimit.resetSeconds),
  ))
    res.setHeader(name, value);
}

/**
 * Public routes: an API key, counted against the route's per-key limits. A route that only reads
 * (`readsOnly`) trusts a key this gateway checked lately, as the answers it gives from memory do:
 * - while the gateway holds points it leased of each counter, the call spends them and goes on
 *   with no round trip at all;
 * - else the read starts at once on the remembered caller while the key is checked (taking a new
 *   lease) in PostgreSQL: the answer waits for that check and is its 401 or 429 if it
 *   fails (settleAuth), so a poll costs one round trip of latency, not two.
 */
export function apiKeyGuard(
  ops: Operations,
  limits: readonly KeyLimit[],
  { readsOnly = false }: { readsOnly?: boolean } = {},
): RequestHandler {
  return async (req, res, next) => {
    if (!readsOnly) {
      setAuth(req, await bearerCaller(ops, req, res, limits, 'rest'));
      return next();
    }
    const token = bearerToken(req);
    const leased = ops.identity.leasedCaller(token, limits, 'rest');
    if (leased) {
      setRateLimitHeaders(res, leased.rateLimit);
      setAuth(req, leased.caller);
      return next();
    }
    const remembered = ops.identity.rememberedCaller(token, 'rest');
    if (remembered) {
      const check = bearerCaller(ops, req, res, limits, 'rest').then((caller) => {
        if (caller.userId !== remembered.userId) throw new UnauthorizedError();
      });
      setRememberedAuth(req, remembered, check);
      return next();
    }
    setAuth(req, await bearerCaller(ops, req, res, limits, 'rest'));
    next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session cookie's token, if the request carries one. */
export const sessionToken = (req: Request): string | undefined =>
  parseCookie(req.headers.cookie ?? '')[sessionCookieName(req.secure)];

/**
 * Management routes: the `svc_session` cookie (`__Host-svc_session` over https). API keys are not accepted. A cookie-authenticated
 * write must come from our own origin: Sec-Fetch-Site, else Origin, must not say cross-site.
 */
export function sessionGuard(ops: Operations, via: Caller['via'] = 'rest'): RequestHandler {
  return async (req, _res, next) => {
    if (!SAFE_METHODS.has(req.method)) assertSameOrigin(req.headers, req.protocol, req.get('host'));
    setAuth(req, await ops.identity.authenticateSession(sessionToken(req), via));
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
