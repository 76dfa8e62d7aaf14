import type { ErrorCode } from '../../../core/errors/app-error';
import { exampleActiveRun } from '../../../core/schemas/examples';

/**
 * What each refusal looks like, for the OpenAPI document's examples. Keyed by every code, so a new
 * code cannot be documented without one.
 */
const MESSAGES: Record<ErrorCode, string> = {
  INVALID_REQUEST: 'The request is invalid.',
  INVALID_JSON: 'The request body is not valid JSON.',
  INVALID_RECTANGLE: 'The crop rectangle reaches past the image (2688 × 3024 pixels).',
  TOO_MANY_FILES: 'At most 8 files may be sent in one request.',
  UNAUTHORIZED: 'A valid API key is required.',
  FORBIDDEN: 'Cross-site requests are refused.',
  CHAT_NOT_FOUND: 'Chat not found.',
  RUN_NOT_FOUND: 'Run not found.',
  ATTACHMENT_NOT_FOUND: 'An attachment was not found.',
  WAITPOINT_NOT_FOUND: 'Waitpoint not found.',
  KEY_NOT_FOUND: 'API key not found.',
  WEBHOOK_ENDPOINT_NOT_FOUND: 'Webhook endpoint not found.',
  DELIVERY_NOT_FOUND: 'Delivery not found.',
  MESSAGE_NOT_FOUND: 'Message not found.',
  UNKNOWN_TOOL: 'There is no tool named resize_image.',
  NOT_FOUND: 'Not found.',
  METHOD_NOT_ALLOWED: 'PUT is not allowed here; use GET, HEAD.',
  RUN_ACTIVE: 'A run of this chat is still active.',
  RUN_NOT_ACTIVE: 'The run has already ended.',
  WAITPOINT_RESOLVED: 'The waitpoint was already resolved.',
  EMAIL_TAKEN: 'An account with this email already exists.',
  DELIVERY_IN_PROGRESS: 'The delivery is still being attempted.',
  IDEMPOTENCY_IN_PROGRESS: 'A request with this Idempotency-Key is still running; retry shortly.',
  PLAN_CHANGED: 'The plan pending is not the plan with this planHash.',
  NOT_LATEST_TURN:
    "Only the chat's latest turn can be regenerated: its answers would land after the later turns. Fork the chat at this message (POST /api/v1/chats/{chatId}/fork) and regenerate it there.",
  QUEUE_FULL: 'This chat already has 10 turns queued; send again when one has started.',
  INSUFFICIENT_CREDITS: 'Your credit balance (0) cannot pay for this call (10).',
  BUDGET_EXCEEDED:
    "The run's budget of 5 credits (maxCredits) would be exceeded: it has spent 4.2, and its next model call may cost up to 1.5.",
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  RANGE_NOT_SATISFIABLE: "The range asked for is not within the file's 1000 bytes.",
  UNSUPPORTED_MEDIA_TYPE: 'The request body must be application/json.',
  MEDIA_UNAVAILABLE: 'https://media.example.com/clips/main.mp4 could not be fetched: 404.',
  LIMIT_REACHED: 'You have reached the limit of 20 API keys.',
  IDEMPOTENCY_KEY_REUSED: 'This Idempotency-Key was used with another request.',
  RATE_LIMITED: 'Too many sends; retry after the time in Retry-After.',
  ACTIVE_LIMIT: 'You already have 8 runs in progress; retry when one ends.',
  INTERNAL: 'Something went wrong on our side.',
  PROVIDER_ERROR: "The tool's provider failed.",
  PROVIDER_NOT_CONFIGURED: 'No provider is configured for ai_image_2.',
  SERVICE_UNAVAILABLE: 'A service this request needs is unavailable; retry shortly.',
  TIMEOUT: 'The tool did not finish within 5 minutes.',
};

/** The error envelope as `code` answers it, with the members that code carries. */
export function errorExample(code: ErrorCode) {
  return {
    error: MESSAGES[code],
    code,
    ...(code === 'INVALID_REQUEST'
      ? { details: [{ path: 'text', message: 'Too big: expected string to have <=8192 characters' }] }
      : {}),
    ...(code === 'RUN_ACTIVE' ? { activeRun: exampleActiveRun } : {}),
  };
}
