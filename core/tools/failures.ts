import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, permanentFailure } from '../errors/failures';
import { GuardedHttpError } from '../net/guarded-http';
import { MediaFetchError } from '../net/fetch-media';

/**
 * A failed fetch of a user's media URL as an activity failure. Whatever the cause, it is the
 * caller's input that is unusable, so it ends as a 4xx, never as our provider's 5xx. Every URL
 * the service will not fetch (a private, loopback, link-local or metadata address, a name that
 * does not resolve, one of our own `/files/` URLs that is not the caller's) gets one answer,
 * MEDIA_UNAVAILABLE (422) "may not be fetched", so no answer tells which internal names exist; the
 * spec's code for an input URL not fetched, so a schema-valid URL is never a 400. Too many
 * redirects is INVALID_REQUEST too, bytes of the wrong kind
 * UNSUPPORTED_MEDIA_TYPE, more than `cap.maxBytes` PAYLOAD_TOO_LARGE (naming its setting), and a host that does not answer, or
 * answers with an error, MEDIA_UNAVAILABLE (422). Only a 5xx or 429 from that host is worth
 * retrying, and it is retried under the same type, so the last attempt still names the cause.
 */
export function mediaFetchFailure(
  err: unknown,
  what: string,
  cap: { maxBytes: number; setting: 'FETCH_MAX_BYTES' | 'IMAGE_FETCH_MAX_BYTES' },
): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof GuardedHttpError) {
    switch (err.kind) {
      case 'BLOCKED_ADDRESS':
      case 'BAD_URL':
        return permanentFailure('MEDIA_UNAVAILABLE', `${what}: the URL may not be fetched.`);
      case 'TOO_LARGE':
        return permanentFailure(
          'PAYLOAD_TOO_LARGE',
          `${what} is larger than ${formatBytes(cap.maxBytes)}, the most fetched from one URL (${cap.setting}).`,
        );
      case 'TOO_MANY_REDIRECTS':
      case 'REDIRECT_REFUSED':
        return permanentFailure('INVALID_REQUEST', `${what}: too many redirects.`);
      case 'TIMEOUT':
        return permanentFailure(
          'MEDIA_UNAVAILABLE',
          `${what} could not be fetched: the host did not answer in time.`,
        );
      case 'NETWORK':
        return permanentFailure(
          'MEDIA_UNAVAILABLE',
          `${what} could not be fetched: the host could not be reached.`,
        );
    }
  }
  if (err instanceof MediaFetchError) {
    if (err.kind === 'UNSUPPORTED_TYPE')
      return permanentFailure('UNSUPPORTED_MEDIA_TYPE', `${what}: ${err.message}`);
    const message = `${what} could not be fetched (HTTP ${err.status}).`;
    return ApplicationFailure.create({
      type: FAILURE_TYPES.MEDIA_UNAVAILABLE,
      message,
      nonRetryable: err.status === undefined || (err.status < 500 && err.status !== 429),
    });
  }
  return err;
}

/**
 * A failed fetch of a provider's output: the provider's failure (502), never the caller's. A
 * timeout, a network error, a 5xx or a 429 is retried; anything else is permanent.
 */
export function providerOutputFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof GuardedHttpError && (err.kind === 'TIMEOUT' || err.kind === 'NETWORK')) return err;
  if (err instanceof MediaFetchError && err.status !== undefined && (err.status >= 500 || err.status === 429))
    return err;
  return permanentFailure(
    'PROVIDER_ERROR',
    'The generated image could not be used.',
    err instanceof Error ? err.message : String(err),
  );
}

/**
 * A provider's answer as an activity failure: 4xx permanent (502), 429 and 5xx retried. The
 * provider's own text (which may echo the prompt, a key name, an internal host) is kept out of
 * the message a client sees; the caller logs it.
 */
export function providerHttpFailure(provider: string, status: number, detail?: string): Error {
  const message = `The ${provider} provider answered HTTP ${status}.`;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return permanentFailure('PROVIDER_ERROR', message, detail?.slice(0, 300));
  }
  return new Error(message);
}

const MIB = 1024 * 1024;

/** A byte limit as people read it: whole mebibytes as such, anything else in bytes. */
export function formatBytes(bytes: number): string {
  return bytes >= MIB && bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}
