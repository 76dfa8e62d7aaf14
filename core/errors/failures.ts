import { ApplicationFailure } from '@temporalio/common';
import type { ErrorCode } from './app-error';

/**
 * The `type` of every activity failure that names its cause: the permanent (non-retryable) ones,
 * and MEDIA_UNAVAILABLE, also thrown retryable. Each is also an HTTP error code, so a blocking
 * route maps a failed workflow onto the envelope without a second table.
 */
export const FAILURE_TYPES = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  INVALID_RECTANGLE: 'INVALID_RECTANGLE',
  ATTACHMENT_NOT_FOUND: 'ATTACHMENT_NOT_FOUND',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  MEDIA_UNAVAILABLE: 'MEDIA_UNAVAILABLE',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  PROVIDER_ERROR: 'PROVIDER_ERROR',
  PROVIDER_NOT_CONFIGURED: 'PROVIDER_NOT_CONFIGURED',
  TIMEOUT: 'TIMEOUT',
  RUN_NOT_FOUND: 'RUN_NOT_FOUND',
  RUN_NOT_ACTIVE: 'RUN_NOT_ACTIVE',
  WEBHOOK_ENDPOINT_NOT_FOUND: 'WEBHOOK_ENDPOINT_NOT_FOUND',
  INSUFFICIENT_CREDITS: 'INSUFFICIENT_CREDITS',
  ACTIVE_LIMIT: 'ACTIVE_LIMIT',
  LIMIT_REACHED: 'LIMIT_REACHED',
} as const satisfies Record<string, ErrorCode>;

export type FailureType = (typeof FAILURE_TYPES)[keyof typeof FAILURE_TYPES];

/**
 * A failure no retry can mend: bad input, a provider's 4xx, a missing row. `message` may reach the
 * client (a tool call's error); `detail` (a provider's own words) stays in the failure's details,
 * which Temporal keeps for operators, and never reaches a client.
 */
export function permanentFailure(type: FailureType, message: string, detail?: string): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    ...(detail === undefined ? {} : { details: [detail] }),
  });
}

export function isFailureType(value: unknown): value is FailureType {
  return typeof value === 'string' && Object.values(FAILURE_TYPES).includes(value as FailureType);
}
