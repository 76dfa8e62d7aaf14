import { createHmac, timingSafeEqual } from 'node:crypto';
import { appSecrets, publicBaseUrl, type Config } from '../config/config';
import type { ToolResult } from '../schemas/events';
import type { ContentBlock } from '../schemas/runs';
import { encodeKeyPath, isKeyOf, isValidKey } from './keys';

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

/** The gateway's URL for an object, `/files/{key}?exp=…&sig=…`, good for FILE_URL_TTL. */
export function signedFileUrl(config: Config, key: string, now = Date.now()): string {
  const expires = String(fileUrlExpiry(config, now));
  const sig = signWith(config.APP_SECRET, key, expires);
  return `${publicBaseUrl(config)}/files/${encodeKeyPath(key)}?exp=${expires}&sig=${sig}`;
}

/** A URL naming one of this gateway's `/files/` objects: the key, and the signature it carries. */
export interface FileUrl {
  /** Empty when the path is not valid percent-encoding: a key no signature verifies. */
  key: string;
  sig: string | undefined;
  exp: string | undefined;
}

/**
 * The key and signature of a URL naming this gateway's `/files/`, however it is spelled (the
 * host's case, a port or scheme of its own, dot segments, a signature or none); undefined for a
 * URL of any other host or path. Nothing is checked here: see verifyKeySignature.
 */
export function fileUrlOf(config: Config, url: string): FileUrl | undefined {
  // Most strings read (every URL of a tool result, every turn's image_urls) are not ours.
  if (!url.includes('/files/') || !URL.canParse(url)) return undefined;
  const given = new URL(url);
  const files = new URL(`${publicBaseUrl(config)}/files/`);
  if (given.hostname !== files.hostname || !given.pathname.startsWith(files.pathname)) return undefined;
  let key = '';
  try {
    key = given.pathname.slice(files.pathname.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    // Not valid percent-encoding: still ours, and no key of any object.
  }
  return {
    key,
    sig: given.searchParams.get('sig') ?? undefined,
    exp: given.searchParams.get('exp') ?? undefined,
  };
}

/**
 * The stored object a `/files/` URL given as input names, when it is one `reader` may read: its
 * signature holds now (not expired, under APP_SECRET or a previous one) and the object is one of
 * the reader's own uploads or tool outputs. Undefined for any other `/files/` URL: forged,
 * expired, signed under a retired secret, or another user's.
 */
export function readableFileKey(config: Config, file: FileUrl, reader: string): string | undefined {
  if (!isReadersKey(file.key, reader)) return undefined;
  return verifyKeySignature(config, file.key, file.sig, file.exp) ? file.key : undefined;
}

function isReadersKey(key: string, reader: string): boolean {
  return isKeyOf(key, reader) && isValidKey(key);
}

/**
 * A file URL the service wrote itself, signed afresh when it names one of `reader`'s files; any
 * other string as it was. Stored messages and results keep the URL minted when they were written,
 * long expired or signed under a secret since retired, so its signature cannot be what vouches
 * for it: where it is stored does (see refreshContentBlocks), and whose key it names.
 */
function refreshedUrl(config: Config, url: string, reader: string, now: number): string {
  const file = fileUrlOf(config, url);
  return file && isReadersKey(file.key, reader) ? signedFileUrl(config, file.key, now) : url;
}

/** A tool's result with its own file URLs (output and assets) signed afresh for `reader`. */
export function refreshToolResult<T extends ToolResult | null | undefined>(
  config: Config,
  result: T,
  reader: string,
  now = Date.now(),
): T {
  if (!result) return result;
  const url = refreshedUrl(config, result.output.url, reader, now);
  let assets: ToolResult['assets'] | undefined;
  result.assets.forEach((asset, i) => {
    const fresh = refreshedUrl(config, asset.url, reader, now);
    if (fresh !== asset.url) (assets ??= [...result.assets])[i] = { ...asset, url: fresh };
  });
  if (url === result.output.url && !assets) return result;
  return { ...result, output: { ...result.output, url }, assets: assets ?? result.assets };
}

/**
 * Content blocks with the file URLs the service wrote into them signed afresh for `reader`: the
 * URL of an attachment (a block with an `attachmentId`) and a tool result's. What a user or a
 * model wrote (text, a turn's `image_urls`, a tool call's input) is returned as written, whatever
 * it holds: a look-alike or stale URL of ours given there never comes back signed. Messages keep
 * the URL minted when they were written; whoever reads them later gets one that works for
 * FILE_URL_TTL from the read. Copy on write: blocks with nothing to sign (every poll of a
 * text-only turn) are returned as they were.
 */
export function refreshContentBlocks(
  config: Config,
  blocks: ContentBlock[],
  reader: string,
  now = Date.now(),
): ContentBlock[] {
  let copy: ContentBlock[] | undefined;
  blocks.forEach((block, i) => {
    let fresh: ContentBlock = block;
    if ((block.type === 'image' || block.type === 'video' || block.type === 'audio') && block.attachmentId) {
      const url = refreshedUrl(config, block.url, reader, now);
      if (url !== block.url) fresh = { ...block, url };
    } else if (block.type === 'tool_result' && block.result) {
      const result = refreshToolResult(config, block.result, reader, now);
      if (result !== block.result) fresh = { ...block, result };
    }
    if (fresh !== block) (copy ??= [...blocks])[i] = fresh;
  });
  return copy ?? blocks;
}
