import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Pool } from 'pg';
import { createAgentActivities } from '../../activities/agent';
import { claimPlanDecision } from '../../core/runs/store';
import { admitTurn } from '../../operations/runs/admission';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';
import { startWorker, testModels, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

/**
 * The step activity on the real database, run as Temporal runs a retry: the same input again,
 * after the first attempt's effects committed but its result was never recorded (its worker died).
 */
describe('a retried model step', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  let worker: TestWorker;

  before(async () => {
    const config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}` });
    gateway = await startGateway({ config });
    worker = await startWorker({
      config: (await testStack()).config({ TEMPORAL_TASK_QUEUE: `step-${randomUUID()}` }),
    });
  });
  after(async () => {
    await gateway.close();
    await worker.stop();
  });

  it('goes on with the plan the approver saw, without asking the model for another', async () => {
    const user = await createTestUser();
    const { run } = await admitTurn(gateway.deps, {
      userId: user.userId,
      via: 'rest',
      text: 'draw a cat',
      imageUrls: [],
      attachmentIds: [],
      planMode: true,
    });
    const planned = {
      text: 'I will draw a cat.',
      toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
    };
    const other = {
      text: 'I will draw a dog.',
      toolCalls: [{ id: 'c2', toolName: 'ai_image_2', input: { prompt: 'a dog' } }],
    };
    const model = new ScriptedModel([planned, other]);
    const activities = createAgentActivities({
      ...worker.deps,
      models: testModels(worker.deps.config, model),
      toolSpecs: [],
    });
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: run.chatId, runId: randomUUID() },
    });
    const input = {
      runId: run.runId,
      step: 1,
      textSoFar: '',
      contentBlocks: [],
      turnMessages: [],
      planWaitpoint: { id: randomUUID(), timeoutMs: 60_000 },
    };

    const first = await env.run(activities.agentStep, input);
    assert.deepEqual(first, {
      kind: 'tools',
      reply: planned,
      waitpointId: input.planWaitpoint.id,
      maxSteps: 8,
    });
    // The approver sees the plan and approves it; then the step runs again, as after a crash.
    const { db } = await testStack();
    const claimed = await claimPlanDecision(
      db.pool,
      { userId: user.userId, chatId: run.chatId, runId: run.runId, waitpointId: input.planWaitpoint.id },
      { approved: true },
      { userId: user.userId, apiKeyId: user.apiKeyId, via: 'rest' },
    );
    assert.equal(typeof claimed, 'object');

    const retried = await env.run(activities.agentStep, input);
    assert.deepEqual(retried, {
      kind: 'tools',
      reply: planned,
      waitpointId: input.planWaitpoint.id,
      maxSteps: 8,
    });
    assert.equal(model.calls.length, 1, 'the model was asked once');
  });

  it('passes over a streamed-text write that fails mid-reply: the step ends with its whole text, the worker process lives', async () => {
    const user = await createTestUser();
    const { run } = await admitTurn(gateway.deps, {
      userId: user.userId,
      via: 'rest',
      text: 'hello',
      imageUrls: [],
      attachmentIds: [],
      planMode: false,
    });
    const model = new ScriptedModel([
      { text: 'A reply long enough to stream in two halves.', toolCalls: [] },
    ]);
    model.holdAfterFirstHalf();
    // The partial text's pool as a busy database leaves it: no connection in time.
    let writes = 0;
    const bookkeeping = {
      query: () => {
        writes += 1;
        return Promise.reject(new Error('timeout exceeded when trying to connect'));
      },
    } as unknown as Pool;
    const activities = createAgentActivities({
      ...worker.deps,
      db: { ...worker.deps.db, bookkeeping },
      models: testModels(worker.deps.config, model),
      toolSpecs: [],
    });
    const env = new MockActivityEnvironment({
      workflowExecution: { workflowId: run.chatId, runId: randomUUID() },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.prependListener('unhandledRejection', onUnhandled);
    try {
      const step = env.run(activities.agentStep, {
        runId: run.runId,
        step: 1,
        textSoFar: '',
        contentBlocks: [],
        turnMessages: [],
      });
      await waitFor(async () => (writes > 0 ? true : undefined), { what: 'the first half written' });
      // Node tells of a rejection nobody handles once the microtasks of its turn have run.
      await new Promise((resolve) => setImmediate(resolve));
      model.release();
      const ended = (await step) as { kind: string };
      assert.equal(ended.kind, 'ended');
      assert.deepEqual(unhandled, [], 'no rejection left unhandled (it ends a worker process)');
      const { db } = await testStack();
      const stored = await db.pool.query<{ text: string; status: string }>(
        `SELECT text, status FROM "Run" WHERE id = $1`,
        [run.runId],
      );
      assert.deepEqual(stored.rows, [
        { text: 'A reply long enough to stream in two halves.', status: 'COMPLETE' },
      ]);
    } finally {
      process.removeListener('unhandledRejection', onUnhandled);
    }
  });
});
