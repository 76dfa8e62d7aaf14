import { randomUUID } from 'node:crypto';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';

export interface TestService {
  gateway: TestGateway;
  worker: TestWorker;
  /** A user of the service, with an API key. */
  user: TestUser;
  stop(): Promise<void>;
}

/**
 * A gateway and a worker on a task queue of their own (named after the suite), the worker's model
 * `model`, and a user: what a suite that drives whole turns over HTTP starts in its `before`.
 */
export async function startService(
  name: string,
  model: LanguageModelV4,
  env: Record<string, string> = {},
): Promise<TestService> {
  const config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `${name}-${randomUUID()}`, ...env });
  const worker = await startWorker({ config, model });
  const gateway = await startGateway({ config });
  const user = await createTestUser();
  return {
    gateway,
    worker,
    user,
    async stop() {
      await gateway.close();
      await worker.stop();
    },
  };
}
