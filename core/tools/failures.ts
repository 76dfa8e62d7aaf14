import { ApplicationFailure } from '@temporalio/common';
import { permanentFailure } from '../errors/failures';
import { GuardedHttpError } from '../net/guarded-http';
import { MediaFetchError } from '../net/fetch-media';

/**
 * A failed fetch of a user's media URL as an activity failure: what no retry can mend (a refused
 * address, a 4xx, not an image) is permanent and says why; a timeout, a network error or a 5xx
 * is thrown as is, and retried.
 */
export function mediaFetchFailure(err: unknown, what: string): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof GuardedHttpError) {
    switch (err.kind) {
      case 'BLOCKED_ADDRESS':
      case 'BAD_URL':
        return permanentFailure('INVALID_REQUEST', `${what}: the URL may not be fetched.`);
      case 'TOO_LARGE':
        return permanentFailure('PAYLOAD_TOO_LARGE', `${what} is too large.`);
      case 'TOO_MANY_REDIRECTS':
      case 'REDIRECT_REFUSED':
        return permanentFailure('INVALID_REQUEST', `${what}: too many redirects.`);
      default:
        return err;
    }
  }
  if (err instanceof MediaFetchError) {
    if (err.kind === 'UNSUPPORTED_TYPE')
      return permanentFailure('UNSUPPORTED_MEDIA_TYPE', `${what}: ${err.message}`);
    if (err.status !== undefined && err.status < 500 && err.status !== 429) {
      return permanentFailure('INVALID_REQUEST', `${what} could not be fetched (HTTP ${err.status}).`);
    }
  }
  return err;
}

/** A provider's answer as an activity failure: 4xx permanent (502), 429 and 5xx retried. */
export function providerHttpFailure(provider: string, status: number, detail?: string): Error {
  const message = `The ${provider} provider answered HTTP ${status}${detail ? `: ${detail.slice(0, 300)}` : ''}.`;
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return permanentFailure('PROVIDER_ERROR', message);
  }
  return new Error(message);
}
