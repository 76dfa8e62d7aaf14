const MAX_FILENAME_LENGTH = 200;
const DEFAULT_FILENAME = 'file';

/**
 * A client's filename reduced to a harmless display name: the last path segment only, no control
 * or format characters (CR/LF, bidi overrides), no quotes or backslashes, at most 200 characters.
 */
export function sanitizeFilename(raw: string | undefined): string {
  const base = (raw ?? '').normalize('NFC').split(/[/\\]/).pop() ?? '';
  const cleaned = base
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}"'`\\]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  const limited = Array.from(cleaned).slice(0, MAX_FILENAME_LENGTH).join('').trim();
  return limited === '' || limited === '.' || limited === '..' ? DEFAULT_FILENAME : limited;
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
