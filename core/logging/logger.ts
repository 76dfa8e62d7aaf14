import pino, { type Logger } from 'pino';
import { currentTraceId } from '../telemetry/tracing';
import { currentLogFields } from './context';

export type { Logger } from 'pino';

/** Paths pino blanks on every line: credentials can never reach a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'req.query.sig',
  '*.password',
  '*.secret',
  '*.key',
  '*.token',
  '*.apiKey',
  '*.passwordHash',
  '*.keyHash',
  '*.tokenHash',
  '*.secretEncrypted',
];

/**
 * A URL as it may be logged: the `sig` of a signed file URL is a bearer credential for that file,
 * so its value is blanked wherever it stands in the query.
 */
export function redactUrlSignature(url: string): string {
  return url.replace(/([?&]sig=)[^&#]*/g, '$1[redacted]');
}

/**
 * Every line carries the ids of the request or activity it was written for (userId, chatId,
 * runId, …; see ./context) and the trace id when tracing is on; fields a call passes itself win.
 */
export function createLogger(
  options: { level: string; name: string },
  destination?: pino.DestinationStream,
): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: options.name },
      mixin: () => {
        const traceId = currentTraceId();
        return traceId ? { ...currentLogFields(), traceId } : currentLogFields();
      },
    },
    destination,
  );
}
