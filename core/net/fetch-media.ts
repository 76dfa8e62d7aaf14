import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { GuardedHttp, GuardedStream } from './guarded-http';

export type MediaKind = 'image' | 'video';

export interface FetchedMedia {
  body: Buffer;
  /** Decided by the bytes (magic numbers), never by the server's Content-Type. */
  mimeType: string;
  ext: string;
}

/** A fetched URL that is not usable media: an error status, or bytes of the wrong kind. */
export class MediaFetchError extends Error {
  constructor(
    readonly kind: 'HTTP_STATUS' | 'UNSUPPORTED_TYPE',
    message: string,
    /** The remote status, for HTTP_STATUS: a 5xx is worth retrying, a 4xx is not. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'MediaFetchError';
  }
}

export interface MediaOptions {
  maxBytes: number;
  accept: MediaKind;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A media URL whose answer is in and whose body is still to be read. */
export interface OpenedMedia {
  /** The length the server declared (Content-Length), when it did. */
  declaredBytes: number | undefined;
  /** Reads the body into memory and checks what the bytes are. */
  read(): Promise<FetchedMedia>;
  /**
   * Streams the body into `file` and checks what the bytes are; `take` may refuse a chunk (a
   * limit shared by several bodies), failing the read with GuardedHttpError('TOO_LARGE').
   */
  save(file: string, take?: (bytes: number) => boolean): Promise<Omit<FetchedMedia, 'body'>>;
  discard(): void;
}

/**
 * Opens a user-supplied media URL through the guard: an error status fails here, before any of
 * the body is read; the bytes' kind is checked once they are read.
 */
export async function openMedia(http: GuardedHttp, url: string, options: MediaOptions): Promise<OpenedMedia> {
  const res = await http.open(url, {
    maxBytes: options.maxBytes,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (res.status < 200 || res.status > 299) {
    res.discard();
    throw new MediaFetchError('HTTP_STATUS', `Fetching ${url} answered HTTP ${res.status}.`, res.status);
  }
  return mediaBody(res, url, options.accept);
}

/**
 * Media whose bytes come as `body` (a fetched answer, or a stored object): read or saved, and
 * refused unless the bytes are of the `accept` kind.
 */
export function mediaBody(
  body: Pick<GuardedStream, 'declaredBytes' | 'chunks' | 'discard'>,
  url: string,
  accept: MediaKind,
): OpenedMedia {
  const expect = (type: { mime: string; ext: string } | undefined) => {
    if (!type || !type.mime.startsWith(`${accept}/`)) {
      throw new MediaFetchError(
        'UNSUPPORTED_TYPE',
        `${url} is not ${accept === 'image' ? 'an image' : 'a video'}.`,
      );
    }
    return { mimeType: type.mime, ext: type.ext };
  };
  return {
    declaredBytes: body.declaredBytes,
    discard: () => body.discard(),
    async read() {
      const chunks: Buffer[] = [];
      for await (const chunk of body.chunks()) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      return { body: bytes, ...expect(await sniff(bytes)) };
    },
    async save(file, take) {
      await pipeline(Readable.from(body.chunks(take)), createWriteStream(file));
      const { fileTypeFromFile } = await import('file-type');
      return expect(await fileTypeFromFile(file));
    },
  };
}

/** Fetches a user-supplied media URL through the guard and checks what the bytes really are. */
export async function fetchMedia(
  http: GuardedHttp,
  url: string,
  options: MediaOptions,
): Promise<FetchedMedia> {
  return (await openMedia(http, url, options)).read();
}

/** file-type is ESM-only: loaded on first use through a dynamic import. */
export async function sniff(body: Buffer): Promise<{ mime: string; ext: string } | undefined> {
  const { fileTypeFromBuffer } = await import('file-type');
  return fileTypeFromBuffer(body);
}
