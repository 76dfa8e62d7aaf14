import type { AddressInfo } from 'node:net';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfigOrExit, operatorHost } from '../../core/config/config';
import { createDatabase } from '../../core/db/client';
import { createNotificationHub } from '../../core/db/notification-hub';
import { createLogger } from '../../core/logging/logger';
import { temporalLogger, temporalLogLevel } from '../../core/logging/temporal';
import { freePort } from '../../core/process/ports';
import { notifyReady, onShutdown } from '../../core/process/ready';
import { sdkMetricsExporter } from '../../core/telemetry/temporal-runtime';
import { startTracing } from '../../core/telemetry/tracing';
import { createWorkerTemporalClient } from '../../core/temporal/connection';
import { createGuardedHttp } from '../../core/net/guarded-http-client';
import { createStorage } from '../../core/storage';
import { createModelProvider } from '../../core/model';
import { startDeliveries, workerStarter } from '../../operations/temporal';
import { startWorkerHttp } from './http';
import { createWorker, stopWorker } from './worker';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'worker' });
  const tracing = startTracing({ serviceName: 'agent-chat-worker' });
  // The SDK's own lines (its worker, the workflows' log, the Rust core's) go through pino too.
  const sdkLevel = temporalLogLevel(config.LOG_LEVEL);
  const sdkMetrics = sdkMetricsExporter(await freePort());
  Runtime.install({
    logger: temporalLogger(logger, sdkLevel),
    telemetryOptions: {
      logging: { filter: { core: sdkLevel, other: sdkLevel }, forward: {} },
      metrics: sdkMetrics.options,
    },
  });
  const db = createDatabase({ url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE });
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
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
  const worker = await createWorker(
    {
      config,
      db,
      startDeliveries: (deliveries) => startDeliveries(starter, deliveries),
      logger,
      storage: createStorage(config),
      http: createGuardedHttp(config),
      model: createModelProvider(config),
      notifications,
      stopping: handoff.signal,
    },
    {
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      shutdownGraceMs: config.SHUTDOWN_GRACE,
      tracing,
    },
  );
  const http = await startWorkerHttp({
    port: config.WORKER_HTTP_PORT,
    host: operatorHost(config),
    token: config.METRICS_TOKEN,
    worker,
    db,
    connection,
    sdkMetricsUrl: sdkMetrics.url,
    logger,
  });
  // Runs until shut down, then closes what it used: a stop ends when this does.
  const finished = worker.run().finally(async () => {
    http.closeAllConnections();
    http.close();
    await connection.close();
    await notifications.close();
    await db.close();
    await tracing?.shutdown();
  });
  // A stop ends polling, then waits for the work in flight: an activity finishes within
  // SHUTDOWN_GRACE or is cancelled and its attempt reported failed, so Temporal retries it at once
  // instead of after its heartbeat timeout; a local model step hands its run over (stopWorker).
  onShutdown(async () => {
    if (worker.getState() === 'RUNNING') {
      logger.info({ graceMs: config.SHUTDOWN_GRACE }, 'worker stopping');
      stopWorker(worker, handoff, config.SHUTDOWN_GRACE);
    }
    await finished;
  });
  logger.info(
    {
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      httpPort: (http.address() as AddressInfo).port,
      tracing: !!tracing,
    },
    'worker running',
  );
  notifyReady();
  await finished;
}

main().catch((err: unknown) => {
  process.stderr.write(`worker failed: ${String(err)}\n`);
  process.exit(1);
});
