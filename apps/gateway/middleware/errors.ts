import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError } from '../../../core/errors/app-error';

interface HttpParserError {
  type?: string;
  status?: number;
}

/** Maps body-parser's own errors onto the envelope's codes. */
function fromParserError(err: HttpParserError): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('INVALID_JSON', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.');
    default:
      return undefined;
  }
}

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new AppError('NOT_FOUND', 'No such route.'));
};

/** The one place an error becomes an HTTP answer: `{ error, code, details? }`, nothing internal. */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  const appError =
    err instanceof AppError
      ? err
      : (fromParserError(err as HttpParserError) ??
        new AppError('INTERNAL', 'Something went wrong on our side.'));
  if (appError.code === 'INTERNAL') req.log.error({ err }, 'unhandled error');
  else req.log.info({ code: appError.code }, appError.message);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
  res.status(appError.status).json({
    error: appError.message,
    code: appError.code,
    ...(appError.details?.length ? { details: appError.details } : {}),
  });
};
