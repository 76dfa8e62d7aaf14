/**
 * The one outbound HTTP client for every URL a user supplies (image_url, image_urls, video_urls)
 * and for webhook delivery. Built by createGuardedHttp in core/net/guarded-http-client.ts.
 */
export interface GuardedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overall deadline for connect + headers + body (for `open`, until the body is read). */
  timeoutMs?: number;
  /** Redirects followed, each re-checked; 0 refuses any redirect (webhook delivery). */
  maxRedirects?: number;
  /** Bytes of body read at most; a larger body fails with GuardedHttpError('TOO_LARGE'). */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL finally answered, after redirects. */
  url: string;
}

export type GuardedHttpErrorKind =
  | 'BLOCKED_ADDRESS'
  | 'BAD_URL'
  | 'TOO_MANY_REDIRECTS'
  | 'REDIRECT_REFUSED'
  | 'TOO_LARGE'
  | 'TIMEOUT'
  | 'NETWORK';

export class GuardedHttpError extends Error {
  constructor(
    readonly kind: GuardedHttpErrorKind,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'GuardedHttpError';
  }
}

/** A response whose headers have arrived and whose body is still to be read (or dropped). */
export interface GuardedStream {
  status: number;
  headers: Record<string, string>;
  /** The URL finally answered, after redirects. */
  url: string;
  /** The body's length as the server declared it (Content-Length), when it did. */
  declaredBytes: number | undefined;
  /**
   * The body, chunk by chunk, under the request's deadline and byte limit. `take` is asked before
   * each chunk is passed on (a limit shared by several bodies); refused, the read fails with
   * GuardedHttpError('TOO_LARGE').
   */
  chunks(take?: (bytes: number) => boolean): AsyncIterable<Buffer>;
  /** Drops the body unread, and its connection with it. */
  discard(): void;
}

export interface GuardedHttp {
  /** Sends the request and reads the whole body. */
  request(url: string, init?: GuardedRequest): Promise<GuardedResponse>;
  /**
   * Sends the request and answers once the headers are in: a caller can judge the declared
   * length before reading. It must then read `chunks()` to the end or `discard()` the body.
   */
  open(url: string, init?: GuardedRequest): Promise<GuardedStream>;
}
