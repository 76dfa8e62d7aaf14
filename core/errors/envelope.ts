import { isDatabaseUnavailable } from '../db/client';
import { AppError, ServiceUnavailableError } from './app-error';

interface HttpParserError {
  type?: string;
  status?: unknown;
  /** Set by http-errors, which body-parser and Express use: true for a client's error. */
  expose?: unknown;
}

/**
 * Maps what Express and body-parser refuse on their own onto the envelope's codes: a request they
 * cannot read is the client's to fix, never a 500 (nor an error line anyone can write at will).
 * Their messages are not passed on: a path's would echo what the client sent.
 */
function fromParserError(err: HttpParserError): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('INVALID_JSON', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.');
  }
  // The router could not decode a path parameter (`%E0`): it marks the URIError 400.
  if (err instanceof URIError)
    return new AppError('INVALID_REQUEST', 'The request path is not valid percent-encoding.');
  // Any other refusal of theirs (too many form fields, a body shorter than its length): an exposed
  // 4xx of http-errors. Another library's `status` (a provider's answer) says nothing about ours.
  if (err.expose !== true || typeof err.status !== 'number' || err.status < 400 || err.status >= 500)
    return undefined;
  if (err.status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (err.status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body is not supported.');
  return new AppError('INVALID_REQUEST', 'The request could not be read.');
}

/** gRPC UNAVAILABLE: the Temporal frontend cannot be reached. */
const GRPC_UNAVAILABLE = 14;

/**
 * A dependency that cannot be reached answers 503, so clients and load balancers retry, instead
 * of a 500 that reads as our bug. Nothing is written half: each write is one statement or
 * transaction, and a start that never reached Temporal is left to the dispatcher.
 */
function fromUnavailable(err: unknown): AppError | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  if (isDatabaseUnavailable(err) || code === GRPC_UNAVAILABLE || cause?.code === GRPC_UNAVAILABLE) {
    return new ServiceUnavailableError('A service this request needs is unavailable; retry shortly.');
  }
  return undefined;
}

/** Any error as the envelope names it: ours as thrown, a dependency down as 503, the rest INTERNAL. */
export function toAppError(err: unknown): AppError {
  return err instanceof AppError
    ? err
    : (fromParserError(err as HttpParserError) ??
        fromUnavailable(err) ??
        new AppError('INTERNAL', 'Something went wrong on our side.'));
}

/** The envelope of an error, as REST answers it and MCP returns it: nothing internal. */
export function errorEnvelope(appError: AppError): Record<string, unknown> & {
  error: string;
  code: AppError['code'];
} {
  return {
    ...appError.fields,
    error: appError.message,
    code: appError.code,
    ...(appError.details?.length ? { details: [...appError.details] } : {}),
  };
}
