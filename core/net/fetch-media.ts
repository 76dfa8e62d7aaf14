import type { GuardedHttp } from './guarded-http';

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

/** Fetches a user-supplied media URL through the guard and checks what the bytes really are. */
export async function fetchMedia(
  http: GuardedHttp,
  url: string,
  options: { maxBytes: number; accept: MediaKind; timeoutMs?: number; signal?: AbortSignal },
): Promise<FetchedMedia> {
  const res = await http.request(url, {
    maxBytes: options.maxBytes,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (res.status < 200 || res.status > 299) {
    throw new MediaFetchError('HTTP_STATUS', `Fetching ${url} answered HTTP ${res.status}.`, res.status);
  }
  const type = await sniff(res.body);
  if (!type || !type.mime.startsWith(`${options.accept}/`)) {
    throw new MediaFetchError(
      'UNSUPPORTED_TYPE',
      `${url} is not ${options.accept === 'image' ? 'an image' : 'a video'}.`,
    );
  }
  return { body: res.body, mimeType: type.mime, ext: type.ext };
}

/** file-type is ESM-only: loaded on first use through a dynamic import. */
export async function sniff(body: Buffer): Promise<{ mime: string; ext: string } | undefined> {
  const { fileTypeFromBuffer } = await import('file-type');
  return fileTypeFromBuffer(body);
}
