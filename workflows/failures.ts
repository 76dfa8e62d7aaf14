import { ApplicationFailure } from '@temporalio/workflow';
import { isFailureType, type FailureType } from '../core/errors/failures';

/**
 * What a workflow may tell a user about a failed activity: the message of a non-retryable
 * ApplicationFailure with a type from the one table (written for users by the code that threw it),
 * and that type as the error code. Anything else (a bug, a timeout, spent retries) is hidden
 * behind the fallback.
 */
export function userSafeFailure(
  err: unknown,
  fallback: string,
): { code: FailureType | 'INTERNAL'; message: string } {
  let cause: unknown = err;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure && cause.nonRetryable && isFailureType(cause.type)) {
      return { code: cause.type, message: cause.message };
    }
    cause = cause.cause;
  }
  return { code: 'INTERNAL', message: fallback };
}
