import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError } from '../../../core/errors/app-error';
import { errorEnvelope, toAppError } from '../../../core/errors/envelope';
import { httpErrors } from '../../../core/metrics/registry';
import type { Logger } from '../../../core/logging/logger';

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new AppError('NOT_FOUND', 'No such route.'));
};

/**
 * The one place an error becomes an HTTP answer: `{ error, code, details? }`, nothing internal. Its
 * line carries the request's id and the ids it had learnt (see ./observe.ts).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const appError = toAppError(err);
    httpErrors.inc({ status: String(appError.status), code: appError.code });
    if (appError.code === 'INTERNAL') logger.error({ err }, 'unhandled error');
    else if (appError.code === 'SERVICE_UNAVAILABLE') logger.warn({ err }, appError.message);
    else logger.info({ code: appError.code }, appError.message);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
    res.status(appError.status).json(errorEnvelope(appError));
  };
}
