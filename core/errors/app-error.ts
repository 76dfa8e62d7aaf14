/**
 * Every error code the HTTP API can answer, with its status. The error middleware and the OpenAPI
 * document both read this table, so the two cannot disagree.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_JSON: 400,
  INVALID_RECTANGLE: 400,
  TOO_MANY_FILES: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  CHAT_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  ATTACHMENT_NOT_FOUND: 404,
  WAITPOINT_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  WEBHOOK_ENDPOINT_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  UNKNOWN_TOOL: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  RUN_ACTIVE: 409,
  RUN_NOT_ACTIVE: 409,
  WAITPOINT_RESOLVED: 409,
  EMAIL_TAKEN: 409,
  DELIVERY_IN_PROGRESS: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PLAN_CHANGED: 409,
  NOT_LATEST_TURN: 409,
  QUEUE_FULL: 409,
  INSUFFICIENT_CREDITS: 402,
  BUDGET_EXCEEDED: 402,
  PAYLOAD_TOO_LARGE: 413,
  RANGE_NOT_SATISFIABLE: 416,
  UNSUPPORTED_MEDIA_TYPE: 415,
  MEDIA_UNAVAILABLE: 422,
  LIMIT_REACHED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  ACTIVE_LIMIT: 429,
  INTERNAL: 500,
  PROVIDER_ERROR: 502,
  PROVIDER_NOT_CONFIGURED: 503,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly ErrorDetail[],
    readonly headers?: Readonly<Record<string, string>>,
    /** Members the envelope carries besides error, code and details (documented on Error). */
    readonly fields?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export class ValidationError extends AppError {
  constructor(details: readonly ErrorDetail[], message = 'The request is invalid.') {
    super('INVALID_REQUEST', message, details);
  }
}

export class NotFoundError extends AppError {
  constructor(
    code: Extract<
      ErrorCode,
      | 'CHAT_NOT_FOUND'
      | 'RUN_NOT_FOUND'
      | 'ATTACHMENT_NOT_FOUND'
      | 'WAITPOINT_NOT_FOUND'
      | 'KEY_NOT_FOUND'
      | 'WEBHOOK_ENDPOINT_NOT_FOUND'
      | 'DELIVERY_NOT_FOUND'
      | 'UNKNOWN_TOOL'
      | 'NOT_FOUND'
    >,
    message: string,
  ) {
    super(code, message);
  }
}

export class ConflictError extends AppError {
  constructor(
    code: Extract<
      ErrorCode,
      | 'RUN_ACTIVE'
      | 'RUN_NOT_ACTIVE'
      | 'WAITPOINT_RESOLVED'
      | 'PLAN_CHANGED'
      | 'QUEUE_FULL'
      | 'EMAIL_TAKEN'
      | 'DELIVERY_IN_PROGRESS'
    >,
    message: string,
  ) {
    super(code, message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'A valid API key is required.') {
    super('UNAUTHORIZED', message);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(message: string) {
    super('SERVICE_UNAVAILABLE', message);
  }
}
