import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';
import { startWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

/**
 * A worker asked to stop (SIGTERM, a deploy) while a run's model step runs inside it as a local
 * activity. The SDK never cancels a local activity at a stop, so without a handoff the stop would
 * wait for the model and the run for the workflow task's timeout on another worker.
 */
describe('a worker stopped mid-step', function () {
  this.timeout(60_000);
  let gateway: TestGateway;

  afterEach(async () => {
    await gateway.close();
  });

  it('stops within its grace and hands the step to another worker, which ends the run', async () => {
    const config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `stop-${randomUUID()}` });
    gateway = await startGateway({ config });
    const first = new ScriptedModel([{ text: 'the first worker never finishes this', toolCalls: [] }]);
    first.holdAfterFirstHalf();
    const stopping = await startWorker({ config, model: first, shutdownGraceMs: 500 });
    const user = await createTestUser();
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ text: 'hello' }),
    });
    assert.equal(res.status, 202);
    const turn = (await res.json()) as { chatId: string; runId: string };
    const runUrl = `${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`;
    const view = async () =>
      (await (await fetch(runUrl, { headers: user.bearer })).json()) as Record<string, unknown>;
    await waitFor(async () => (String((await view()).text).startsWith('the first') ? true : undefined), {
      timeoutMs: 20_000,
      what: 'the first half of the reply',
    });

    const second = new ScriptedModel([{ text: 'the second worker does', toolCalls: [] }]);
    const taking = await startWorker({ config, model: second });
    try {
      // A stop that waited for the held model would never end: the test's timeout fails it.
      await stopping.stop();
      assert.equal(first.aborted, 1, 'the first worker stopped its model call');
      const ended = await waitFor(
        async () => {
          const v = await view();
          return v.status === 'RUNNING' || v.status === 'QUEUED' ? undefined : v;
        },
        { timeoutMs: 30_000, what: 'the run to end' },
      );
      assert.equal(ended.status, 'COMPLETE', JSON.stringify(ended));
      assert.equal(ended.text, 'the second worker does');
      assert.equal(second.calls.length, 1);

      const { temporal } = await testStack();
      const events = (await temporal.client.workflow.getHandle(turn.chatId).fetchHistory()).events ?? [];
      const scheduled = events.flatMap((e) =>
        e.activityTaskScheduledEventAttributes
          ? [e.activityTaskScheduledEventAttributes.activityType?.name]
          : [],
      );
      assert.deepEqual(scheduled, ['agentStep'], 'the step went to the task queue, once');
      assert.ok(
        !events.some((e) => e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes),
        'no workflow task timed out or failed: the run did not wait for the stopped worker',
      );
    } finally {
      await taking.stop();
    }
  });
});
