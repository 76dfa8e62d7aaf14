/**
 * The one outbound HTTP client for every URL a user supplies (image_url, image_urls, video_urls)
 * and for webhook delivery. Built by createGuardedHttp in core/net/guarded-http-client.ts.
 */
export interface GuardedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overall deadline for connect + headers + body. */
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
  ) {
    super(message);
    this.name = 'GuardedHttpError';
  }
}

export interface GuardedHttp {
  request(url: string, init?: GuardedRequest): Promise<GuardedResponse>;
}
