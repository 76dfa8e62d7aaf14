import type { Request } from 'express';
import type { ByteRange, ObjectInfo } from '../../../core/storage/storage';

/**
 * The one range of a stored object a GET asks for (RFC 9110 §14), or `unsatisfiable` (416), or
 * undefined for the whole object: no Range, a malformed one or one of another unit (ignored, as
 * the RFC allows), several ranges (served whole: media players ask for one), or an If-Range that
 * names another version of the object.
 */
export function requestedRange(req: Request, info: ObjectInfo): ByteRange | 'unsatisfiable' | undefined {
  if (req.headers.range === undefined || !ifRangeHolds(req.get('if-range'), info)) return undefined;
  const ranges = req.range(info.size, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1)
    return undefined;
  const [range] = ranges;
  return range && { start: range.start, end: range.end };
}

/**
 * Whether a GET's validators name the stored version (RFC 9110 §13.2.2), to be answered 304:
 * If-None-Match (`*`, or any of its ETags, compared weakly), or, without it, If-Modified-Since
 * no earlier than the object's Last-Modified. A request's `Cache-Control: no-cache` is for
 * caches on the way and does not change the answer (fetch() sends it with every conditional GET).
 */
export function notModified(req: Request, info: ObjectInfo): boolean {
  const ifNoneMatch = req.get('if-none-match');
  if (ifNoneMatch !== undefined) return noneMatch(ifNoneMatch, info.etag);
  const since = Date.parse(req.get('if-modified-since') ?? '');
  return Number.isFinite(since) && seconds(info.lastModified) <= since;
}

/** Whether an If-None-Match header names this ETag: `*`, or any of its tags, compared weakly. */
export function noneMatch(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/** HTTP dates have whole seconds: a Last-Modified as the header carries it. */
const seconds = (date: Date) => Math.floor(date.getTime() / 1000) * 1000;

/**
 * If-Range holds when it names this very version: the same strong ETag, or exactly its
 * Last-Modified date. A weak ETag never holds (byte ranges need the same bytes).
 */
function ifRangeHolds(ifRange: string | undefined, info: ObjectInfo): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === info.etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && date === seconds(info.lastModified);
}
