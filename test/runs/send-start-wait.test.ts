import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { metrics } from '../../core/metrics/registry';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { sampleSum } from '../support/prometheus';
import { waitFor } from '../support/wait';

const startWaits = async () => sampleSum(await metrics.metrics(), 'agent_send_start_waits_total');

describe('SEND_START_WAIT=off', () => {
  let gateway: TestGateway;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    // No worker polls this queue: the started executions stay open, and only the start is observed.
    gateway = await startGateway({
      config: stack.config({
        TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}`,
        MAX_ACTIVE_RUNS_PER_USER: '100',
        SEND_START_WAIT: 'off',
      }),
    });
    user = await createTestUser();
  });
  after(() => gateway.close());

  it('answers each send once its turn is durable, without waiting for the start, and starts it all the same', async () => {
    const before = await startWaits();
    const turns: { chatId: string; runId: string; triggerRunId: string | null }[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.bearer },
        body: JSON.stringify({ text: `hello ${i}` }),
      });
      assert.equal(res.status, 202, await res.clone().text());
      turns.push((await res.json()) as (typeof turns)[number]);
    }
    // No answer waited for its start: none was weighed for a wait, none carries the execution.
    assert.equal(await startWaits(), before, 'no send weighed a wait for its start');
    assert.deepEqual(
      turns.map((t) => t.triggerRunId),
      turns.map(() => null),
    );
    const { temporal } = await testStack();
    for (const turn of turns) {
      const description = await waitFor(() =>
        temporal.client.workflow
          .getHandle(turn.chatId)
          .describe()
          .catch(() => undefined),
      );
      assert.equal(description.type, 'agentRunWorkflow');
      assert.deepEqual(await description.memo, { runId: turn.runId, metadata: {} });
    }
  });

  it('is refused when it is neither paced nor off, naming the variable', async () => {
    const stack = await testStack();
    assert.throws(() => stack.config({ SEND_START_WAIT: 'sometimes' }), /SEND_START_WAIT/);
  });
});
