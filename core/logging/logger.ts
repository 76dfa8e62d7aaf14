import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino blanks on every line: credentials can never reach a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
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
    },
    destination,
  );
}
