import { createHash, hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * JSON with every object's keys sorted and undefined members left out (RFC 8785's ordering for
 * the values the API has): two equal values give the same text whatever order they were built in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of a value's canonical JSON, hex: a stable name for what a value says. */
export function canonicalHash(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'hex');
}

/**
 * A UUID named by a value: the same value always gives the same UUID (RFC 9562 version 8, its
 * 122 free bits from the value's canonical SHA-256). For ids that a retry must find again.
 */
export function canonicalUuid(value: unknown): string {
  const bytes = Buffer.from(canonicalHash(value).slice(0, 32), 'hex');
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** SHA-256 of a file's bytes, hex, read as a stream (files may be 20 MB). */
export async function fileHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The weak ETag of a JSON answer's text: equal texts, equal tags. One definition, so a tag the
 * gateway remembers for a poll is the one the route sent.
 */
export function weakEtag(json: string): string {
  // One-shot: twice as fast as a Hash object for a snapshot's few hundred bytes, on every poll.
  return `W/"${hash('sha1', json, 'base64url')}"`;
}
