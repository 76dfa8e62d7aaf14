import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'svck_live_';
export const WEBHOOK_SECRET_PREFIX = 'svcwhsec_';
/** How much of a key the list shows: `svck_live_` and four characters of the secret part. */
export const API_KEY_SHOWN_PREFIX_LENGTH = 14;
export const SESSION_COOKIE = 'svc_session';

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
  return createHash('sha256').update(token).digest('hex');
}

export const API_KEY_PATTERN = /^svck_live_[A-Za-z0-9_-]{43}$/;
