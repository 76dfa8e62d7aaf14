import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { receiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { ScriptedModel } from '../support/scripted-model';
import { testStack } from '../../testkit/stack';
import { createWebhookEndpoint } from '../support/webhooks';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { waitFor } from '../support/wait';

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
    worker = await startWorker({ config, model });
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
    ).json()) as { chatId: string; runId: string; messageId: string; triggerRunId: string | null };

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
    const run = (
      await db.pool.query(`SELECT "assistantMessageId", "triggerRunId" FROM "Run" WHERE id = $1`, [
        turn.runId,
      ])
    ).rows[0];
    // The execution that ran the turn; the send's answer names it too when the start was quick.
    if (turn.triggerRunId) assert.equal(run?.triggerRunId, turn.triggerRunId);
    const expected = {
      chatId: turn.chatId,
      runId: turn.runId,
      messageId: turn.messageId,
      traceId: 'ab'.repeat(16),
      processId: run?.triggerRunId as string,
      assistantMessageId: run?.assistantMessageId as string,
    };
    assert.deepEqual(started.data, { ...expected, status: 'QUEUED' });
    // The spec's fields, all strings, and the run's usage (an extension) beside them.
    const { usage, ...spec } = completed.data;
    assert.deepEqual(spec, { ...expected, status: 'COMPLETE' });
    assert.deepEqual(usage, {
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      steps: 1,
      credits: '0',
      compacted: false,
    });
    assert.match(completed.id, new RegExp(`^wh:[0-9a-f-]{36}:agent\\.completed:${turn.runId}$`));
    for (const value of Object.values(spec)) assert.equal(typeof value, 'string');
  });

  it("carries the send's metadata in agent.started and agent.completed", async () => {
    const user = await subscribedUser();
    const before = receiver.requests.length;
    const metadata = { customer: 'acme', ticket: 'T-1042' };
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ text: 'hello', metadata }),
    });
    assert.equal(res.status, 202);
    const { runId } = (await res.json()) as { runId: string };
    const bodies = (await receiver.waitForRequests(before + 2))
      .slice(before)
      .map((r) => JSON.parse(r.rawBody.toString('utf8')) as { event: string; data: Record<string, unknown> });
    assert.deepEqual(bodies.map((b) => b.event).sort(), ['agent.completed', 'agent.started']);
    for (const body of bodies) {
      assert.equal(body.data.runId, runId);
      assert.deepEqual(body.data.metadata, metadata);
    }
  });

  it('sends agent.failed with the error when a turn fails', async () => {
    const user = await subscribedUser();
    const failWorkerConfig = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `events-fail-${randomUUID()}`,
      OUTBOUND_CA_FILE: (await receiverCertificate()).caFile,
      MODEL_PROVIDER: 'none',
    });
    const failWorker = await startWorker({ config: failWorkerConfig, model: null });
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
      assert.deepEqual(failed.data.usage, {
        inputTokens: 0,
        outputTokens: 0,
        cachedInputTokens: 0,
        steps: 0,
        credits: '0',
        compacted: false,
      });
    } finally {
      await failGateway.close();
      await failWorker.stop();
    }
  });

  it("shows the run's webhook ledger in its snapshot: each event to each endpoint, status and attempts", async () => {
    const user = await subscribedUser();
    const failing = await startHttpsReceiver([], { status: 500, body: 'down' });
    try {
      const broken = await createWebhookEndpoint(gateway.url, user, failing.url, ['agent.completed']);
      const working = (
        (await (
          await fetch(`${gateway.url}/api/webhook-endpoints`, { headers: { cookie: user.cookie } })
        ).json()) as { data: { id: string; url: string }[] }
      ).data.find((e) => e.url === receiver.url);
      assert.ok(working);
      model.replies.push({ text: 'Hi.', toolCalls: [] });
      const turn = (await (
        await fetch(`${gateway.url}/api/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.bearer },
          body: JSON.stringify({ text: 'hello' }),
        })
      ).json()) as { chatId: string; runId: string };

      interface Ledger {
        event: string;
        endpointId: string;
        status: string;
        attempts: number;
        lastStatusCode: number | null;
        toolCallId: string | null;
        envelopeId: string;
      }
      const ledger = () =>
        fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, { headers: user.bearer })
          .then((r) => r.json() as Promise<{ webhooks: Ledger[] }>)
          .then((snap) => snap.webhooks);
      // Delivered to the working receiver; the broken one has failed twice and is being retried.
      const settled = await waitFor(
        async () => {
          const rows = await ledger();
          const done =
            rows.filter((d) => d.endpointId === working.id && d.status === 'DELIVERED').length === 2;
          const retried = rows.some((d) => d.endpointId === broken.id && d.attempts >= 2);
          return done && retried ? rows : undefined;
        },
        { what: 'the deliveries to settle', timeoutMs: 60_000 },
      );
      const view = settled
        .map((d) => [d.event, d.endpointId === working.id ? 'working' : 'broken', d.status, d.lastStatusCode])
        .sort((a, b) => String(a).localeCompare(String(b)));
      assert.deepEqual(view, [
        ['agent.completed', 'broken', settled.find((d) => d.endpointId === broken.id)?.status, 500],
        ['agent.completed', 'working', 'DELIVERED', 200],
        ['agent.started', 'working', 'DELIVERED', 200],
      ]);
      for (const d of settled) {
        assert.equal(d.toolCallId, null);
        assert.equal(d.envelopeId, `wh:${d.endpointId}:${d.event}:${turn.runId}`);
      }
      assert.equal(
        settled.find((d) => d.endpointId === working.id && d.event === 'agent.completed')?.attempts,
        1,
      );
      // The ledger agrees with the endpoint's own attempt log.
      const log = (await (
        await fetch(`${gateway.url}/api/webhook-endpoints/${broken.id}/deliveries`, {
          headers: { cookie: user.cookie },
        })
      ).json()) as { data: { id: string; attempts: unknown[] }[] };
      const brokenRow = settled.find((d) => d.endpointId === broken.id);
      assert.ok((log.data[0]?.attempts.length ?? 0) >= (brokenRow?.attempts ?? Infinity));

      // Another user sees no run, hence no ledger.
      const other = await createTestUser();
      const probe = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
        headers: other.bearer,
      });
      assert.equal(probe.status, 404);
    } finally {
      await failing.close();
    }
  });
});
