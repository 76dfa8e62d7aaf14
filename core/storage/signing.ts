import { createHmac, timingSafeEqual } from 'node:crypto';
import { appSecrets, publicBaseUrl, type Config } from '../config/config';
import { encodeKeyPath } from './keys';

const HOUR_MS = 3_600_000;
const SIGNATURE = /^[0-9a-f]{64}$/;
const EXPIRY = /^\d{1,12}$/;

/**
 * A key of its own, derived from APP_SECRET, so a file signature can never be replayed as any
 * other HMAC the service computes with that secret.
 */
function urlSigningKey(appSecret: string): Buffer {
  return createHmac('sha256', appSecret).update('storage/file-url/v2').digest();
}

function signWith(appSecret: string, key: string, expires: string): string {
  return createHmac('sha256', urlSigningKey(appSecret)).update(`${key}\n${expires}`).digest('hex');
}

/**
 * When a URL signed now stops working (unix seconds): FILE_URL_TTL from now, rounded up to the
 * hour (or to the TTL, when shorter), so the URLs of one object minted within that hour are the
 * same URL, and caches and clients see one address rather than a new one on every read.
 */
export function fileUrlExpiry(config: Config, now = Date.now()): number {
  const bucket = Math.min(HOUR_MS, config.FILE_URL_TTL);
  return Math.ceil((now + config.FILE_URL_TTL) / bucket) * (bucket / 1000);
}

/**
 * Constant-time check of the `exp` and `sig` query values against the key they claim to sign,
 * under APP_SECRET or one of APP_SECRET_PREVIOUS (URLs handed out before a rotation keep working
 * until they expire).
 */
export function verifyKeySignature(
  config: Config,
  key: string,
  sig: string | undefined,
  expires: string | undefined,
  now = Date.now(),
): boolean {
  if (typeof sig !== 'string' || !SIGNATURE.test(sig)) return false;
  if (typeof expires !== 'string' || !EXPIRY.test(expires) || Number(expires) * 1000 <= now) return false;
  const given = Buffer.from(sig, 'hex');
  return appSecrets(config).some((secret) =>
    timingSafeEqual(given, Buffer.from(signWith(secret, key, expires), 'hex')),
  );
}

function filesPrefix(config: Config): string {
  return `${publicBaseUrl(config)}/files/`;
}

/** The gateway's URL for an object, `/files/{key}?exp=…&sig=…`, good for FILE_URL_TTL. */
export function signedFileUrl(config: Config, key: string, now = Date.now()): string {
  const expires = String(fileUrlExpiry(config, now));
  const sig = signWith(config.APP_SECRET, key, expires);
  return `${publicBaseUrl(config)}/files/${encodeKeyPath(key)}?exp=${expires}&sig=${sig}`;
}

/**
 * The object key and signature of one of this gateway's signed `/files/` URLs (not checked here:
 * see verifyKeySignature); undefined for any other string.
 */
export function signedFileOf(
  config: Config,
  url: string,
): { key: string; sig: string; exp: string | undefined } | undefined {
  const prefix = filesPrefix(config);
  if (!url.startsWith(prefix)) return undefined;
  const [path = '', query] = url.slice(prefix.length).split('?', 2);
  const params = new URLSearchParams(query ?? '');
  const sig = params.get('sig');
  if (sig === null) return undefined;
  try {
    return {
      key: path.split('/').map(decodeURIComponent).join('/'),
      sig,
      exp: params.get('exp') ?? undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * `value` with every signed gateway file URL in it signed afresh. Messages, tool results and
 * webhook payloads keep the URL minted when they were written; whoever reads them later gets a
 * URL that works for FILE_URL_TTL from the read. Only this gateway's own `/files/` URLs are
 * touched: a look-alike URL of another host given as input is never turned into one of ours.
 */
export function refreshFileUrls<T>(config: Config, value: T, now = Date.now()): T {
  const prefix = filesPrefix(config);
  // Copy on write: what holds no file URL (every poll of a text-only turn) is returned as it was,
  // without a copy of each of its objects for the collector to sweep.
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const file = v.startsWith(prefix) ? signedFileOf(config, v) : undefined;
      if (!file) return v;
      try {
        return signedFileUrl(config, file.key, now);
      } catch {
        return v;
      }
    }
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      v.forEach((item: unknown, i) => {
        const walked = walk(item);
        if (walked !== item) (copy ??= [...(v as unknown[])])[i] = walked;
      });
      return copy ?? v;
    }
    if (v && typeof v === 'object' && !(v instanceof Date)) {
      let copy: Record<string, unknown> | undefined;
      for (const [k, item] of Object.entries(v)) {
        const walked = walk(item);
        if (walked !== item) (copy ??= { ...v })[k] = walked;
      }
      return copy ?? v;
    }
    return v;
  };
  return walk(value) as T;
}
