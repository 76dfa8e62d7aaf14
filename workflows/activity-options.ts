import { ApplicationFailure, type ActivityOptions } from '@temporalio/common';

/** Database bookkeeping: quick, idempotent, retried until it lands. */
export const BOOKKEEPING_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const satisfies ActivityOptions;

/**
 * `runTool`: providers are polled for up to five minutes and a stalled attempt is noticed by its
 * heartbeats. Permanent failures (bad input, a provider's 4xx or failed job) are non-retryable
 * by type, so the retries only ever meet transient ones.
 */
export const TOOL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
  },
} as const satisfies ActivityOptions;

/** Activity failures carry a message written for users (non-retryable ApplicationFailure); anything else is hidden. */
export function userSafeMessage(err: unknown, fallback: string): string {
  let cause: unknown = err;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure && cause.type && cause.nonRetryable) return cause.message;
    cause = cause.cause;
  }
  return fallback;
}
