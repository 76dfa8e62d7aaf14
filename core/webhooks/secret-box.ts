import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets must be recoverable (we sign with them), so unlike API keys they cannot
 * be hashed. They are sealed with AES-256-GCM under a key derived from APP_SECRET: a database dump
 * alone reveals nothing, and tampering with a sealed value fails authentication.
 *
 * Each sealed value names its key (a fingerprint of the derived key), so APP_SECRET can be
 * rotated: the new secret seals, and the old ones, listed in APP_SECRET_PREVIOUS, still open what
 * they sealed until `npm run secrets:reseal` has sealed everything again under the new one.
 */
const FORMAT_VERSION = 'v2';
/** The first format, without a key id: opened by trying each key. */
const LEGACY_VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
/** Fixed salt and info: the derived key changes only when APP_SECRET does. */
const HKDF_SALT = 'svc/webhook-secret/salt';
const HKDF_INFO = 'svc/webhook-secret/aes-256-gcm/v1';

interface BoxKey {
  id: string;
  key: Buffer;
}

function deriveKey(appSecret: string): BoxKey {
  const key = Buffer.from(hkdfSync('sha256', appSecret, HKDF_SALT, HKDF_INFO, 32));
  // A fingerprint of the derived key: names it without revealing anything usable.
  const id = createHash('sha256').update('svc/webhook-secret/key-id').update(key).digest('hex').slice(0, 12);
  return { id, key };
}

/** `v2.<key id>.<iv>.<tag>.<ciphertext>`, sealed under the first of `secrets`. */
export function sealSecret(secrets: readonly string[], secret: string): string {
  const [current] = secrets;
  if (current === undefined) throw new Error('No APP_SECRET to seal with.');
  const { id, key } = deriveKey(current);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [
    FORMAT_VERSION,
    id,
    ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url')),
  ].join('.');
}

function open(key: Buffer, iv: string, tag: string, ciphertext: string): string {
  const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  );
}

/** Opens a sealed value with whichever of `secrets` sealed it; throws when none did. */
export function openSecret(secrets: readonly string[], sealed: string): string {
  const parts = sealed.split('.');
  const keys = secrets.map(deriveKey);
  if (parts[0] === FORMAT_VERSION && parts.length === 5) {
    const [, id, iv = '', tag = '', ciphertext = ''] = parts;
    const box = keys.find((k) => k.id === id);
    if (!box) throw new Error('The sealed webhook secret names a key that is not configured.');
    return open(box.key, iv, tag, ciphertext);
  }
  if (parts[0] === LEGACY_VERSION && parts.length === 4) {
    const [, iv = '', tag = '', ciphertext = ''] = parts;
    for (const box of keys) {
      try {
        return open(box.key, iv, tag, ciphertext);
      } catch {
        // Sealed under another key: try the next.
      }
    }
    throw new Error('No configured key opens the sealed webhook secret.');
  }
  throw new Error('The sealed webhook secret has an unknown format.');
}

/** Whether a sealed value is already under the current APP_SECRET (nothing for reseal to do). */
export function sealedWithCurrentKey(secrets: readonly string[], sealed: string): boolean {
  const [current] = secrets;
  return current !== undefined && sealed.startsWith(`${FORMAT_VERSION}.${deriveKey(current).id}.`);
}
