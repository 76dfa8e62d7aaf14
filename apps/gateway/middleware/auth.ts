import type { Request, RequestHandler, Response } from 'express';
import { parse as parseCookie } from 'cookie';
import { sessionCookieName } from '../../../core/auth/tokens';
import { assertSameOrigin } from '../../../core/auth/same-origin';
import { UnauthorizedError } from '../../../core/errors/app-error';
import { bearerToken } from '../../../core/http/request';
import type { Caller, Operations } from '../../../operations';
import type { RateLimitState } from '../../../operations/key-memory';
import { rateLimitHeaders, type UserLimit } from '../../../operations/limits';
import { setAuth, setRememberedAuth } from '../http/auth-context';

/**
 * The caller of `Authorization: Bearer svck_live_…` (session cookies are not accepted), counted
 * against its user's `limits`; the tightest counter's RateLimit headers go on the answer. REST and
 * MCP alike.
 */
export async function bearerCaller(
  ops: Operations,
  req: Request,
  res: Response,
  limits: readonly UserLimit[],
  via: Caller['via'],
): Promise<Caller> {
  const { caller, rateLimit } = await ops.identity.authenticateApiKey(bearerToken(req), limits, via);
  setRateLimitHeaders(res, rateLimit);
  return caller;
}

export function setRateLimitHeaders(res: Response, rateLimit: RateLimitState | undefined): void {
  if (!rateLimit) return;
  for (const [name, value] of Object.entries(
    rateLimitHeaders(rateLimit.limit, rateLimit.remaining, rateLimit.resetSeconds),
  ))
    res.setHeader(name, value);
}

/**
 * Public routes: an API key, counted against the route's per-user limits. A route that only reads
 * (`readsOnly`) trusts a key this gateway checked lately, as the answers it gives from memory do:
 * - while the gateway holds points it leased of each counter, the call spends them and goes on
 *   with no round trip at all;
 * - else the read starts at once on the remembered caller while the key is checked (taking a new
 *   lease) in PostgreSQL: the answer waits for that check and is its 401 or 429 if it
 *   fails (settleAuth), so a poll costs one round trip of latency, not two.
 */
export function apiKeyGuard(
  ops: Operations,
  limits: readonly UserLimit[],
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
export function sessionGuard(ops: Operations): RequestHandler {
  return async (req, _res, next) => {
    if (!SAFE_METHODS.has(req.method)) assertSameOrigin(req.headers, req.protocol, req.get('host'));
    setAuth(req, await ops.identity.authenticateSession(sessionToken(req), 'rest'));
    next();
  };
}

/**
 * The console's mirror of the public routes: the session, with the same cross-site check, counted
 * against the same per-user limits as the route's API-key callers (its RateLimit headers too).
 */
export function consoleGuard(ops: Operations, limits: readonly UserLimit[]): RequestHandler {
  return async (req, res, next) => {
    if (!SAFE_METHODS.has(req.method)) assertSameOrigin(req.headers, req.protocol, req.get('host'));
    const { caller, rateLimit } = await ops.identity.authenticateSessionCall(
      sessionToken(req),
      limits,
      'console',
    );
    setRateLimitHeaders(res, rateLimit);
    setAuth(req, caller);
    next();
  };
}
