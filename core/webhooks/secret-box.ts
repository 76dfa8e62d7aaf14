import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets must be recoverable (we sign with them), so unlike API keys they cannot
 * be hashed. They are sealed with AES-256-GCM under a key derived from APP_SECRET: a database dump
 * alone reveals nothing, and tampering with a sealed value fails authentication.
 */
const FORMAT_VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
/** Fixed salt and info: the derived key changes only when APP_SECRET does. */
const HKDF_SALT = 'svc/webhook-secret/salt';
const HKDF_INFO = 'svc/webhook-secret/aes-256-gcm/v1';

function deriveKey(appSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', appSecret, HKDF_SALT, HKDF_INFO, 32));
}

/** `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function sealSecret(appSecret: string, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, deriveKey(appSecret), iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [FORMAT_VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

export function openSecret(appSecret: string, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.');
  if (version !== FORMAT_VERSION || !iv || !tag || ciphertext === undefined) {
    throw new Error('The sealed webhook secret has an unknown format.');
  }
  const decipher = createDecipheriv(ALGORITHM, deriveKey(appSecret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}
