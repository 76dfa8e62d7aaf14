import { NativeConnection, type Worker } from '@temporalio/worker';
import { createWorker, stopWorker } from '../apps/worker/worker';
import type { ActivityDeps } from '../activities/deps';
import type { Config } from '../core/config/config';
import { createNotificationHub } from '../core/db/notification-hub';
import { createLogger } from '../core/logging/logger';
import { createGuardedHttp } from '../core/net/guarded-http-client';
import { createStorage } from '../core/storage';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createModelCatalog, type ModelCatalog, type OfferedModel } from '../core/model/catalog';
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
    /**
     * A test's model, in place of every model the config offers (or as the one model, `test`, when
     * it offers none); null offers none. Unset: the config's models.
     */
    model?: LanguageModelV4 | null;
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
    models: testModels(config, options.model),
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

/** What a test model stands in for when the config offers no model: the embedded model's shape. */
const TEST_MODEL = {
  name: 'test',
  provider: 'local',
  modelId: 'test',
  baseUrl: undefined,
  apiKey: undefined,
  contextWindow: 32_768,
  maxOutputTokens: 4_096,
  price: { input: '0', output: '0', cachedInput: '0' },
} as const;

/** The models a test worker offers (see startWorker's `model`). */
export function testModels(config: Config, model: LanguageModelV4 | null | undefined): ModelCatalog {
  if (model === undefined) return createModelCatalog(config);
  if (model === null) return { get: () => undefined, defaultModel: undefined };
  const entries = config.models.entries.length ? config.models.entries : [TEST_MODEL];
  const byName = new Map<string, OfferedModel>(entries.map((e) => [e.name, { ...e, language: model }]));
  return { get: (name) => byName.get(name), defaultModel: config.models.defaultModel ?? TEST_MODEL.name };
}
