import type { Server } from 'node:http';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { databaseReachable, type Database } from '../../core/db/client';
import type { Logger } from '../../core/logging/logger';
import { workerMetrics } from '../../core/metrics/worker';
import { metricsAnswer, startOperatorServer } from '../../core/metrics/server';
import { temporalReachable } from '../../core/temporal/connection';

const CHECK_TIMEOUT_MS = 2_000;

export interface WorkerReadiness {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  temporal: 'up' | 'down';
  /** RUNNING while the worker polls its task queue; anything else is not ready. */
  worker: string;
}

export interface WorkerHttpOptions {
  port: number;
  host: string;
  token?: string;
  worker: Pick<Worker, 'getState'>;
  db: Database;
  /** The worker's own connection: what it polls through. */
  connection: NativeConnection;
  /** The Temporal SDK's Prometheus exporter (Runtime.install), whose text /metrics appends. */
  sdkMetricsUrl?: string;
  logger: Logger;
}

/** Ready: PostgreSQL and Temporal answer, and the worker is polling. */
export async function workerReadiness(
  options: Pick<WorkerHttpOptions, 'worker' | 'db' | 'connection'>,
): Promise<WorkerReadiness> {
  const [database, temporal] = await Promise.all([
    databaseReachable(options.db.pool, CHECK_TIMEOUT_MS),
    temporalReachable(options.connection, CHECK_TIMEOUT_MS),
  ]);
  const worker = options.worker.getState();
  return {
    status: database && temporal && worker === 'RUNNING' ? 'ready' : 'unavailable',
    database: database ? 'up' : 'down',
    temporal: temporal ? 'up' : 'down',
    worker,
  };
}

/**
 * The worker's WORKER_HTTP_PORT: `/healthz` (the process answers), `/readyz` (see
 * workerReadiness) and `/metrics` (ours, then the SDK's; behind METRICS_TOKEN when it is set).
 */
export function startWorkerHttp(options: WorkerHttpOptions): Promise<Server> {
  const sdkMetrics = async (): Promise<string | undefined> => {
    if (!options.sdkMetricsUrl) return undefined;
    try {
      const res = await fetch(options.sdkMetricsUrl, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
      return res.ok ? await res.text() : undefined;
    } catch (err) {
      options.logger.warn({ err: (err as Error).message }, 'the Temporal SDK metrics did not answer');
      return undefined;
    }
  };
  return startOperatorServer({
    port: options.port,
    host: options.host,
    token: options.token,
    open: {
      '/healthz': async () => ({ status: 200, body: { status: 'ok' } }),
      '/readyz': async () => {
        const readiness = await workerReadiness(options);
        return { status: readiness.status === 'ready' ? 200 : 503, body: readiness };
      },
    },
    guarded: { '/metrics': async () => metricsAnswer(workerMetrics, await sdkMetrics()) },
  });
}
