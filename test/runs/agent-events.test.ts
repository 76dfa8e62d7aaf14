import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { receiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { ScriptedModel } from '../support/scripted-model';
import { testStack } from '../../testkit/stack';
import { createWebhookEndpoint } from '../support/webhooks';
import { startWorker, type TestWorker } from '../../testkit/worker';

describe('agent events', function () {
  this.timeout(90_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let receiver: HttpsReceiver;
  const model = new ScriptedModel([]);

  before(async () => {
    const { caFile } = await receiverCertificate();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `events-${randomUUID()}`,
      OUTBOUND_CA_FILE: caFile,
    });
    worker = await startWorker({ config, deps: { model } });
    gateway = await startGateway({ config });
    receiver = await startHttpsReceiver();
  });
  after(async () => {
    await receiver.close();
    await gateway.close();
    await worker.stop();
  });

  async function subscribedUser() {
    const user = await createTestUser();
    await createWebhookEndpoint(gateway.url, user, receiver.url, [
      'agent.started',
      'agent.completed',
      'agent.failed',
    ]);
    return user;
  }

  it('sends agent.started (status QUEUED) and agent.completed, with every field a string', async () => {
    const user = await subscribedUser();
    model.replies.push({ text: 'Hi.', toolCalls: [] });
    const before = receiver.requests.length;
    const turn = (await (
      await fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...user.bearer,
          traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`,
        },
        body: JSON.stringify({ text: 'hello' }),
      })
    ).json()) as { chatId: string; runId: string; messageId: string; triggerRunId: string };

    const received = (await receiver.waitForRequests(before + 2)).slice(before);
    const bodies = received.map(
      (r) =>
        JSON.parse(r.rawBody.toString('utf8')) as {
          id: string;
          event: string;
          data: Record<string, unknown>;
        },
    );
    const byEvent = new Map(bodies.map((b) => [b.event, b]));
    const started = byEvent.get('agent.started');
    const completed = byEvent.get('agent.completed');
    assert.ok(started && completed, `got ${bodies.map((b) => b.event).join(', ')}`);
    const { db } = await testStack();
    const run = (await db.pool.query(`SELECT "assistantMessageId" FROM "Run" WHERE id = $1`, [turn.runId]))
      .rows[0];
    const expected = {
      chatId: turn.chatId,
      runId: turn.runId,
      messageId: turn.messageId,
      traceId: 'ab'.repeat(16),
      processId: turn.triggerRunId,
      assistantMessageId: run?.assistantMessageId as string,
    };
    assert.deepEqual(started.data, { ...expected, status: 'QUEUED' });
    assert.deepEqual(completed.data, { ...expected, status: 'COMPLETE' });
    assert.match(completed.id, new RegExp(`^wh:[0-9a-f-]{36}:agent\\.completed:${turn.runId}$`));
    for (const value of Object.values(completed.data)) assert.equal(typeof value, 'string');
  });

  it('sends agent.failed with the error when a turn fails', async () => {
    const user = await subscribedUser();
    const failWorkerConfig = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `events-fail-${randomUUID()}`,
      OUTBOUND_CA_FILE: (await receiverCertificate()).caFile,
      MODEL_PROVIDER: 'none',
    });
    const failWorker = await startWorker({ config: failWorkerConfig, deps: { model: undefined } });
    const failGateway = await startGateway({ config: failWorkerConfig });
    try {
      const before = receiver.requests.length;
      const turn = (await (
        await fetch(`${failGateway.url}/api/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.bearer },
          body: JSON.stringify({ text: 'hello' }),
        })
      ).json()) as { runId: string };
      const received = (await receiver.waitForRequests(before + 2)).slice(before);
      const failed = received
        .map(
          (r) => JSON.parse(r.rawBody.toString('utf8')) as { event: string; data: Record<string, unknown> },
        )
        .find((b) => b.event === 'agent.failed');
      assert.ok(failed);
      assert.equal(failed.data.runId, turn.runId);
      assert.equal(failed.data.status, 'FAILED');
      assert.equal(failed.data.error, 'No model provider is configured.');
    } finally {
      await failGateway.close();
      await failWorker.stop();
    }
  });
});
