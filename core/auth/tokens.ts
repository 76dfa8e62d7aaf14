import { hash, randomBytes } from 'node:crypto';
import { serialize as serializeCookie } from 'cookie';

export const API_KEY_PREFIX = 'svck_live_';
export const WEBHOOK_SECRET_PREFIX = 'svcwhsec_';
/** How much of a key the list shows: `svck_live_` and four characters of the secret part. */
export const API_KEY_SHOWN_PREFIX_LENGTH = 14;
export const SESSION_COOKIE = 'svc_session';
/**
 * Over https the cookie is `__Host-svc_session`: browsers keep such a cookie only when it is
 * Secure, host-only and for path `/`, so a sibling subdomain or a plain-http page cannot plant or
 * overwrite a session (cookie tossing). Plain http (local development) keeps `svc_session`, since
 * browsers refuse a `__Host-` cookie without Secure.
 */
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** The session cookie as every sign-in sets it (identity routes, the OAuth sign-in form). */
export function sessionCookie(secure: boolean, token: string, maxAgeSeconds: number): string {
  return serializeCookie(sessionCookieName(secure), token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure,
    maxAge: maxAgeSeconds,
  });
}

/** `svck_live_` + 32 random bytes, base64url: 43 characters, 256 bits. */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** What the database stores of a key or session token: its hex SHA-256, never the token. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** OAuth tokens of MCP clients: 32 random bytes behind a prefix that tells them from API keys. */
export const OAUTH_ACCESS_PREFIX = 'svco_at_';
export const OAUTH_REFRESH_PREFIX = 'svco_rt_';
export const OAUTH_CODE_PREFIX = 'svco_code_';

export function newOAuthToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export const API_KEY_PATTERN = /^svck_live_[A-Za-z0-9_-]{43}$/;
