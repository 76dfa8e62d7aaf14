import { NativeConnection, type Worker } from '@temporalio/worker';
import { createWorker } from '../apps/worker/worker';
import type { ActivityDeps } from '../activities/deps';
import type { Config } from '../core/config/config';
import { createLogger } from '../core/logging/logger';
import { createGuardedHttp } from '../core/net/guarded-http-client';
import { createStorage } from '../core/storage';
import { createModelProvider } from '../core/model';
import { createTemporalClient } from '../core/temporal/connection';
import { testStack } from './stack';

export interface TestWorker {
  worker: Worker;
  deps: ActivityDeps;
  stop(): Promise<void>;
}

/** The real worker, in-process, on the shared Temporal dev server; overrides go into its deps. */
export async function startWorker(
  options: { config?: Config; deps?: Partial<ActivityDeps> } = {},
): Promise<TestWorker> {
  const stack = await testStack();
  const config = options.config ?? stack.config();
  const temporal = createTemporalClient({
    address: stack.temporalAddress,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  const deps: ActivityDeps = {
    config,
    db: stack.db,
    temporal,
    logger: createLogger({ level: config.LOG_LEVEL, name: 'worker-test' }),
    storage: createStorage(config),
    http: createGuardedHttp(config),
    model: createModelProvider(config),
    ...options.deps,
  };
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const worker = await createWorker(deps, {
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
  });
  const running = worker.run();
  return {
    worker,
    deps,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await temporal.connection.close();
    },
  };
}
