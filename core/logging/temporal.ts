import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from './logger';

const ORDER: LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

const PINO_LEVEL = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<LogLevel, string>;

/**
 * The level of the Temporal SDK's own lines (bundling, polling, state changes): they are for
 * debugging the worker itself, so below WARN only when the service logs at debug or trace.
 */
export function temporalLogLevel(level: string): LogLevel {
  if (level === 'trace') return 'TRACE';
  if (level === 'debug') return 'DEBUG';
  return 'WARN';
}

/**
 * The Temporal SDK's logger (its worker, the workflows' `log`, the activities' context log and
 * the Rust core's forwarded lines) writing pino lines, from `level` up. Temporal's `runId` is the execution's, so
 * it becomes `temporalRunId`; ours (`agentRunId`, set by the interceptors) becomes `runId`, as on
 * every other line.
 */
export function temporalLogger(logger: Logger, level: LogLevel): TemporalLogger {
  const sdk = logger.child({ component: 'temporal' });
  const lowest = ORDER.indexOf(level);
  const log = (lineLevel: LogLevel, message: string, meta: LogMetadata = {}) => {
    if (ORDER.indexOf(lineLevel) < lowest) return;
    const { runId, agentRunId, error, ...rest } = meta as Record<string, unknown>;
    sdk[PINO_LEVEL[lineLevel]](
      {
        ...rest,
        ...(runId ? { temporalRunId: runId } : {}),
        ...(agentRunId ? { runId: agentRunId } : {}),
        ...(error instanceof Error ? { err: error } : error === undefined ? {} : { error }),
      },
      message,
    );
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
