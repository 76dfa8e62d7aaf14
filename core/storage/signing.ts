import { createHmac, timingSafeEqual } from 'node:crypto';
import { publicBaseUrl, type Config } from '../config/config';
import { encodeKeyPath } from './keys';

/**
 * A key of its own, derived from APP_SECRET, so a file signature can never be replayed as any
 * other HMAC the service computes with that secret.
 */
function urlSigningKey(config: Config): Buffer {
  return createHmac('sha256', config.APP_SECRET).update('storage/file-url/v1').digest();
}

export function signKey(config: Config, key: string): string {
  return createHmac('sha256', urlSigningKey(config)).update(key).digest('hex');
}

/** Constant-time check of a `sig` query value against the key it claims to sign. */
export function verifyKeySignature(config: Config, key: string, sig: string | undefined): boolean {
  if (typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig)) return false;
  return timingSafeEqual(Buffer.from(sig, 'hex'), Buffer.from(signKey(config, key), 'hex'));
}

/** The gateway's durable URL for an object: `/files/{key}?sig=…`, served by routes/files.ts. */
export function signedFileUrl(config: Config, key: string): string {
  return `${publicBaseUrl(config)}/files/${encodeKeyPath(key)}?sig=${signKey(config, key)}`;
}
