import { Context } from '@temporalio/activity';
import { ApplicationFailure, type Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';

/** The retry policy of an activity option in workflows/activity-options.ts. */
interface Retry {
  initialInterval: Duration;
  backoffCoefficient: number;
  maximumInterval: Duration;
  maximumAttempts: number;
}

/**
 * When the running activity's next attempt starts, after it fails now with `failure`: the delay
 * the failure asks for (a provider's `retry-after`), else the policy's backoff, as Temporal will
 * wait. Undefined when Temporal will not retry it (the last attempt, a non-retryable failure).
 */
export function nextAttempt(
  retry: Retry,
  failure: unknown,
): { attempt: number; maxAttempts: number; retryAt: string } | undefined {
  const { attempt } = Context.current().info;
  if (!(failure instanceof ApplicationFailure) || failure.nonRetryable || attempt >= retry.maximumAttempts)
    return undefined;
  const backoff = Math.min(
    msToNumber(retry.initialInterval) * retry.backoffCoefficient ** (attempt - 1),
    msToNumber(retry.maximumInterval),
  );
  const given = failure.nextRetryDelay;
  const delay = given === undefined || given === null ? backoff : msToNumber(given);
  return {
    attempt: attempt + 1,
    maxAttempts: retry.maximumAttempts,
    retryAt: new Date(Date.now() + delay).toISOString(),
  };
}

/** Whether the running activity is a retry: what an earlier attempt said it waits for is over. */
export const isRetry = (): boolean => Context.current().info.attempt > 1;
