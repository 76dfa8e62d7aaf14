const MAX_FILENAME_LENGTH = 200;
const DEFAULT_STEM = 'file';
/** The extension a shortened name keeps: a dot and 1–16 letters or digits at its end. */
const EXTENSION = /\.[\p{L}\p{N}]{1,16}$/u;

/**
 * A client's filename reduced to a harmless display name: the last path segment only, no control
 * or format characters (CR/LF, bidi overrides), no quotes or backslashes, at most 200 characters,
 * a longer name shortened before its extension. A name with nothing left (empty, blank, `.`,
 * `..`, a path ending in one) becomes `file`, with `ext` (the type found in the bytes) when given.
 */
export function sanitizeFilename(raw: string | undefined, ext?: string): string {
  const base = (raw ?? '').normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = base
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"'`\\]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  const fallback = ext ? `${DEFAULT_STEM}.${ext}` : DEFAULT_STEM;
  if (/^\.*$/.test(cleaned)) return fallback;
  const chars = Array.from(cleaned);
  if (chars.length <= MAX_FILENAME_LENGTH) return cleaned;
  const extension = EXTENSION.exec(cleaned)?.[0] ?? '';
  const stem = chars
    .slice(0, MAX_FILENAME_LENGTH - Array.from(extension).length)
    .join('')
    .trim();
  return stem === '' ? fallback : `${stem}${extension}`;
}

/** RFC 8187 value-chars: everything else percent-encoded, so nothing can end the header. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** `inline` with an ASCII fallback name and the exact UTF-8 name (RFC 6266). */
export function inlineContentDisposition(filename: string): string {
  const safe = sanitizeFilename(filename);
  const ascii = safe.replace(/[^\x20-\x7e]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(safe)}`;
}
