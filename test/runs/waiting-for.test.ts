import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { startFakePredictionServer } from '../support/fake-providers';
import { waitFor } from '../support/wait';

interface Snapshot {
  status: string;
  toolCalls: { toolName: string; status: string }[];
  waitingFor: {
    kind: string;
    toolName?: string;
    attempt?: number;
    maxAttempts?: number;
    retryAt?: string;
  } | null;
}

/**
 * Why a run is not moving (issue 49), for a tool call: while every one of the user's
 * MAX_ACTIVE_TOOL_CALLS_PER_USER slots is taken, a run's tool call waits by its activity's retries,
 * and its run's snapshot and stream say so, with the next try; it moves on once a slot is free.
 * (The plan's decision and the chat's queue: test/runs/queue.test.ts; a provider's retry:
 * test/runs/model-providers.test.ts.)
 */
describe('why a run is not moving: a tool-call slot', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let user: TestUser;
  let prediction: Awaited<ReturnType<typeof startFakePredictionServer>>;

  before(async () => {
    prediction = await startFakePredictionServer({ held: true, pollsBeforeDone: 1 });
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `waiting-for-${randomUUID()}`,
      MODEL_PROVIDER: 'local',
      IMAGE_PROVIDER: 'prediction',
      PREDICTION_API_URL: prediction.url,
      PREDICTION_API_TOKEN: 'r8_test_token',
      PROVIDER_POLL_INTERVAL: '100ms',
      MAX_ACTIVE_TOOL_CALLS_PER_USER: '1',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  after(async () => {
    prediction?.release();
    await gateway?.close();
    await worker?.stop();
    await prediction?.close();
  });

  const send = async (text: string) => {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ text }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { chatId: string; runId: string };
  };
  const until = (turn: { chatId: string; runId: string }, accept: (s: Snapshot) => boolean, what: string) =>
    waitFor(
      async () => {
        const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
          headers: user.bearer,
        });
        const s = (await res.json()) as Snapshot;
        return accept(s) ? s : undefined;
      },
      { what },
    );

  it("says a run's tool call waits for one of the user's slots, with its next try, and moves on once one is free", async () => {
    const first = await send('generate an image of a lighthouse at dusk');
    await until(first, (s) => s.toolCalls[0]?.status === 'RUNNING', 'the first tool call to hold the slot');
    const second = await send('generate an image of a harbour at dawn');
    const waiting = await until(second, (s) => s.waitingFor?.kind === 'tool_slot', 'the second to wait');
    assert.equal(waiting.status, 'RUNNING');
    assert.deepEqual(waiting.toolCalls, [], 'no call is opened without a slot');
    const seen = Date.now();
    assert.deepEqual(
      { ...waiting.waitingFor, attempt: undefined, retryAt: undefined },
      { kind: 'tool_slot', toolName: 'ai_image_2', attempt: undefined, maxAttempts: 5, retryAt: undefined },
    );
    assert.ok(waiting.waitingFor!.attempt! >= 2);
    assert.ok(
      Date.parse(waiting.waitingFor!.retryAt!) - seen <= 16_000,
      'the next try is within the backoff',
    );
    // The first's answer gives the slot back; the second's next try takes it.
    prediction.release();
    const done = await until(second, (s) => s.status === 'COMPLETE', 'the second to finish');
    assert.equal(done.waitingFor, null);
    assert.deepEqual(
      done.toolCalls.map((t) => [t.toolName, t.status]),
      [['ai_image_2', 'SUCCEEDED']],
    );
    const { rows } = await (
      await testStack()
    ).db.pool.query<{ kind: string | null }>(
      `SELECT data->'waitingFor'->>'kind' AS kind FROM "RunEvent" WHERE "runId" = $1 AND type = 'waiting' ORDER BY seq`,
      [second.runId],
    );
    assert.equal(rows[0]?.kind, 'tool_slot');
    assert.equal(rows.at(-1)?.kind, null, 'the stream said when it moved again');
  });
});
