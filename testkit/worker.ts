import { NativeConnection, type Worker } from '@temporalio/worker';
import { createWorker, stopWorker } from '../apps/worker/worker';
import type { ActivityDeps } from '../activities/deps';
import type { Config } from '../core/config/config';
import { createNotificationHub } from '../core/db/notification-hub';
import { createLogger } from '../core/logging/logger';
import { createGuardedHttp } from '../core/net/guarded-http-client';
import { createStorage } from '../core/storage';
import { createModelProvider } from '../core/model';
import type { Tracing } from '../core/telemetry/tracing';
import { createWorkerTemporalClient } from '../core/temporal/connection';
import { startDeliveries, workerStarter, type Starter } from '../operations/temporal';
import { testStack } from './stack';

export interface TestWorker {
  worker: Worker;
  /** What its activities start deliveries with: its own client, eagerly. */
  starter: Starter;
  /** The worker's own connection (through `temporalAddress` when given). */
  connection: NativeConnection;
  deps: ActivityDeps;
  stop(): Promise<void>;
}

/** The real worker, in-process, on the shared Temporal dev server; overrides go into its deps. */
export async function startWorker(
  options: {
    config?: Config;
    deps?: Partial<ActivityDeps>;
    tracing?: Tracing;
    temporalAddress?: string;
    /** As the worker process's SHUTDOWN_GRACE; unset, a stop waits for everything in flight. */
    shutdownGraceMs?: number;
  } = {},
): Promise<TestWorker> {
  const stack = await testStack();
  const config = options.config ?? stack.config();
  const address = options.temporalAddress ?? stack.temporalAddress;
  const connection = await NativeConnection.connect({ address });
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker-test' });
  const starter = workerStarter(
    createWorkerTemporalClient(connection, config.TEMPORAL_NAMESPACE),
    config,
    logger,
  );
  const notifications = createNotificationHub({
    url: config.DATABASE_URL,
    logger,
    channels: ['run_cancels'],
  });
  const handoff = new AbortController();
  const deps: ActivityDeps = {
    config,
    db: stack.db,
    startDeliveries: (deliveries) => startDeliveries(starter, deliveries),
    logger,
    notifications,
    storage: createStorage(config),
    http: createGuardedHttp(config),
    model: createModelProvider(config),
    stopping: handoff.signal,
    ...options.deps,
  };
  const worker = await createWorker(deps, {
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    tracing: options.tracing,
    shutdownGraceMs: options.shutdownGraceMs,
  });
  const running = worker.run();
  return {
    worker,
    starter,
    connection,
    deps,
    async stop() {
      stopWorker(worker, handoff, options.shutdownGraceMs);
      await running;
      await connection.close();
      await notifications.close();
    },
  };
}
