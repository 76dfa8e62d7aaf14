import assert from 'node:assert/strict';
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { Config } from '../../core/config/config';
import type { AgentEventData } from '../../core/schemas/events';
import { startDelivery } from '../../operations/temporal';
import {
  DELIVERY_FAILED_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryOutput,
} from '../../workflows/webhook-delivery.contract';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import {
  receiverCertificate,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceivedRequest,
} from '../support/https-receiver';
import { testStack } from '../../testkit/stack';
import { createWebhookEndpoint, recordEvent, type TestEvent } from '../support/webhooks';
import { startWorker, type TestWorker } from '../../testkit/worker';

/**
 * The receiver's side of the contract, written from the spec alone (not from core/webhooks):
 * HMAC-SHA256 over `<timestamp>.<raw body>`, hex after `sha256=`, compared in constant time.
 */
function verifySignature(secret: string, request: ReceivedRequest, header = 'x-svc-signature'): boolean {
  const timestamp = request.headers['x-svc-timestamp'];
  const signature = request.headers[header];
  if (typeof timestamp !== 'string' || typeof signature !== 'string' || !signature.startsWith('sha256='))
    return false;
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), request.rawBody]))
    .digest();
  const given = Buffer.from(signature.slice('sha256='.length), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface DeliveryState {
  id: string;
  status: string;
  series: number;
  attempts: {
    series: number;
    attempt: number;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }[];
}

describe('webhook delivery', function () {
  this.timeout(90_000);

  let config: Config;
  let worker: TestWorker;
  let gateway: TestGateway;
  /**
   * Records an event as the statements that change a run or a tool call do (the outbox), starts
   * its deliveries as the worker's steps do (on `on`'s own client), and answers every delivery the
   * event has, new or already there, and how each delivery recorded now was started.
   */
  const emitter = {
    async emitWebhookEvent(
      input: TestEvent,
      on: TestWorker = worker,
    ): Promise<{ deliveryIds: string[]; starts: Awaited<ReturnType<typeof startDelivery>>[] }> {
      const { db } = await testStack();
      const deliveries = await recordEvent(db.pool, input);
      const starts = await Promise.all(deliveries.map((d) => startDelivery(on.starter, d)));
      const { rows } = await db.pool.query<{ id: string }>(
        `SELECT d.id FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
          WHERE e."userId" = $1 AND d.event = $2 AND d."idempotencyKey" = $3 ORDER BY d.id`,
        [input.userId, input.event, input.idempotencyKey],
      );
      return { deliveryIds: rows.map((r) => r.id), starts };
    },
  };
  const receivers: HttpsReceiver[] = [];

  before(async () => {
    const stack = await testStack();
    const { caFile } = await receiverCertificate();
    // A task queue of its own: no other test file's worker, built with other deps, takes these tasks.
    config = stack.config({
      OUTBOUND_CA_FILE: caFile,
      TEMPORAL_TASK_QUEUE: `webhooks-${randomBytes(4).toString('hex')}`,
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await gateway?.close();
    await worker?.stop();
  });

  async function receiver(...args: Parameters<typeof startHttpsReceiver>): Promise<HttpsReceiver> {
    const r = await startHttpsReceiver(...args);
    receivers.push(r);
    return r;
  }

  const createEndpoint = (user: TestUser, url: string, events: string[] = ['agent.completed']) =>
    createWebhookEndpoint(gateway.url, user, url, events);

  function agentCompleted(user: TestUser, runId = randomUUID()) {
    const data: AgentEventData = {
      chatId: randomUUID(),
      runId,
      messageId: randomUUID(),
      traceId: randomBytes(16).toString('hex'),
      processId: randomUUID(),
      status: 'COMPLETE',
      assistantMessageId: randomUUID(),
    };
    return { userId: user.userId, event: 'agent.completed' as const, idempotencyKey: runId, data };
  }

  async function deliveryState(deliveryId: string): Promise<DeliveryState> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<Omit<DeliveryState, 'attempts'>>(
      'SELECT id, status::text AS status, series FROM "WebhookDelivery" WHERE id = $1',
      [deliveryId],
    );
    const { rows: attempts } = await db.pool.query<DeliveryState['attempts'][number]>(
      `SELECT series, attempt, "statusCode", error, "durationMs" FROM "WebhookAttempt"
        WHERE "deliveryId" = $1 ORDER BY series, attempt`,
      [deliveryId],
    );
    assert.ok(rows[0], 'delivery row exists');
    return { ...rows[0], attempts };
  }

  async function waitForStatus(
    deliveryId: string,
    status: string,
    timeoutMs = 40_000,
  ): Promise<DeliveryState> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const state = await deliveryState(deliveryId);
      if (state.status === status) return state;
      if (Date.now() > deadline) throw new Error(`delivery still ${state.status}, expected ${status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The slow scenarios run side by side, each with its own user, endpoint and receiver. */
  interface Scenario {
    user: TestUser;
    endpoint: { id: string; secret: string };
    receiver: HttpsReceiver;
    deliveryId: string;
    /** How its series' workflow was started. */
    start: Awaited<ReturnType<typeof startDelivery>> | undefined;
    /** Its series' workflow. */
    workflow: () => WorkflowHandle;
    /** The result of the series' workflow. */
    outcome: () => Promise<WebhookDeliveryOutput>;
  }
  async function scenario(answers: Parameters<typeof startHttpsReceiver>): Promise<Scenario> {
    const user = await createTestUser();
    const r = await receiver(...answers);
    const endpoint = await createEndpoint(user, r.url);
    const event = agentCompleted(user);
    const { deliveryIds, starts } = await emitter.emitWebhookEvent(event);
    assert.equal(deliveryIds.length, 1);
    const workflowId = webhookDeliveryWorkflowId(
      `wh:${endpoint.id}:${event.event}:${event.idempotencyKey}`,
      1,
    );
    const workflow = () => worker.starter.client.workflow.getHandle(workflowId);
    const outcome = () => workflow().result() as Promise<WebhookDeliveryOutput>;
    return { user, endpoint, receiver: r, deliveryId: deliveryIds[0]!, start: starts[0], workflow, outcome };
  }

  let failing: Promise<Scenario>;
  let hanging: Promise<Scenario>;
  let deleted: Promise<Scenario>;
  let landing: Promise<Scenario>;
  before(() => {
    failing = scenario([[], { status: 500, body: 'nope' }]);
    hanging = scenario([['hang'], { status: 204 }]);
    landing = scenario([[], { status: 200 }]);
    // The endpoint is deleted as soon as the first attempt lands, inside the 1 s before the second.
    deleted = scenario([[], { status: 503 }]).then(async (s) => {
      await s.receiver.waitForRequests(1, 20_000);
      const res = await fetch(`${gateway.url}/api/webhook-endpoints/${s.endpoint.id}`, {
        method: 'DELETE',
        headers: { cookie: s.user.cookie, origin: gateway.url },
      });
      assert.equal(res.status, 204);
      return s;
    });
    // Keep an early rejection from surfacing as unhandled before its test awaits it.
    for (const s of [failing, hanging, deleted, landing]) s.catch(() => undefined);
  });

  it('signs with the new secret and, during the overlap, the old one in x-svc-signature-previous', async () => {
    const user = await createTestUser();
    const r = await receiver();
    const endpoint = await createEndpoint(user, r.url);
    const rotate = async (overlapSeconds: number) => {
      const res = await fetch(`${gateway.url}/api/webhook-endpoints/${endpoint.id}/rotate-secret`, {
        method: 'POST',
        headers: { cookie: user.cookie, origin: gateway.url, 'content-type': 'application/json' },
        body: JSON.stringify({ overlapSeconds }),
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { id: string; secret: string };
      assert.equal(body.id, endpoint.id);
      return body.secret;
    };
    const deliverOne = async () => {
      const { deliveryIds } = await emitter.emitWebhookEvent(agentCompleted(user));
      await waitForStatus(deliveryIds[0]!, 'DELIVERED');
      return r.requests.at(-1)!;
    };

    const second = await rotate(3600);
    assert.notEqual(second, endpoint.secret);
    const overlapping = await deliverOne();
    assert.ok(verifySignature(second, overlapping));
    assert.ok(verifySignature(endpoint.secret, overlapping, 'x-svc-signature-previous'));

    // Rotating again with no overlap: the second secret stops signing at once.
    const third = await rotate(0);
    const after = await deliverOne();
    assert.ok(verifySignature(third, after));
    assert.equal(after.headers['x-svc-signature-previous'], undefined);

    const tooLong = await fetch(`${gateway.url}/api/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      method: 'POST',
      headers: { cookie: user.cookie, origin: gateway.url, 'content-type': 'application/json' },
      body: JSON.stringify({ overlapSeconds: 86_401 }),
    });
    assert.equal(tooLong.status, 400);
  });

  it('posts a signed envelope that an independent verifier accepts, once however often it is emitted', async () => {
    const user = await createTestUser();
    const r = await receiver();
    const endpoint = await createEndpoint(user, r.url, ['agent.completed', 'agent.failed']);
    const input = agentCompleted(user);

    // Two emits racing each other, as a retried activity and its first try could.
    const [first, second] = await Promise.all([
      emitter.emitWebhookEvent(input),
      emitter.emitWebhookEvent(input),
    ]);
    assert.deepEqual(second.deliveryIds, first.deliveryIds);
    const deliveryId = first.deliveryIds[0]!;
    await waitForStatus(deliveryId, 'DELIVERED');
    // Emitting again after delivery starts nothing: the series' workflow has ended, and stays so.
    assert.deepEqual((await emitter.emitWebhookEvent(input)).starts, []);
    const envelopeId = `wh:${endpoint.id}:agent.completed:${input.idempotencyKey}`;
    assert.equal(
      await worker.starter.client.workflow.getHandle(webhookDeliveryWorkflowId(envelopeId, 1)).result(),
      'DELIVERED',
    );
    assert.equal(r.requests.length, 1);

    const [request] = r.requests;
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.ok(verifySignature(endpoint.secret, request), 'signature verifies over the raw bytes');
    assert.equal(verifySignature(`${endpoint.secret}x`, request), false);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['x-svc-event'], 'agent.completed');
    assert.equal(request.headers['x-svc-delivery-id'], deliveryId);
    assert.match(String(request.headers['user-agent']), /\S/);
    const age = Date.now() / 1000 - Number(request.headers['x-svc-timestamp']);
    assert.ok(age >= 0 && age < 30, `timestamp is current (age ${age}s)`);

    const envelope = JSON.parse(request.rawBody.toString('utf8')) as Record<string, unknown>;
    assert.equal(envelope.id, `wh:${endpoint.id}:agent.completed:${input.idempotencyKey}`);
    assert.equal(envelope.event, 'agent.completed');
    assert.ok(!Number.isNaN(Date.parse(String(envelope.createdAt))));
    assert.deepEqual(envelope.data, input.data);

    const state = await deliveryState(deliveryId);
    assert.equal(state.attempts.length, 1);
    assert.equal(state.attempts[0]?.statusCode, 200);

    // The attempt log shows what was sent: the exact signed string and the headers, not the secret.
    const logRes = await fetch(`${gateway.url}/api/webhook-endpoints/${endpoint.id}/deliveries`, {
      headers: { cookie: user.cookie },
    });
    assert.equal(logRes.status, 200);
    const logText = await logRes.text();
    assert.ok(!logText.includes(endpoint.secret), 'the secret never appears in the log');
    const log = JSON.parse(logText) as {
      data: { attempts: { signedContent: string; requestHeaders: Record<string, string> }[] }[];
    };
    const [attempt] = log.data[0]?.attempts ?? [];
    assert.ok(attempt);
    assert.equal(
      attempt.signedContent,
      `${request.headers['x-svc-timestamp']}.${request.rawBody.toString('utf8')}`,
    );
    for (const name of [
      'x-svc-signature',
      'x-svc-timestamp',
      'x-svc-event',
      'x-svc-delivery-id',
      'user-agent',
    ])
      assert.equal(attempt.requestHeaders[name], request.headers[name], name);
    assert.equal(
      `sha256=${createHmac('sha256', endpoint.secret).update(attempt.signedContent).digest('hex')}`,
      attempt.requestHeaders['x-svc-signature'],
    );
  });

  it('does not deliver to an endpoint that does not subscribe to the event', async () => {
    const user = await createTestUser();
    const r = await receiver();
    await createEndpoint(user, r.url, ['tool.completed']);
    const { deliveryIds } = await emitter.emitWebhookEvent(agentCompleted(user));
    assert.deepEqual(deliveryIds, []);
  });

  it('retries a failing endpoint 4 times, waiting about 1, 5 and 15 s, each freshly signed, then FAILED', async () => {
    const s = await failing;
    const [first] = await s.receiver.waitForRequests(1, 20_000);
    assert.ok(first);

    // While the series is still retrying, a redelivery is refused.
    const early = await fetch(`${gateway.url}/api/webhook-deliveries/${s.deliveryId}/redeliver`, {
      method: 'POST',
      headers: { cookie: s.user.cookie, origin: gateway.url },
    });
    assert.equal(early.status, 409);
    assert.equal(((await early.json()) as { code: string }).code, 'DELIVERY_IN_PROGRESS');

    const requests = await s.receiver.waitForRequests(4, 40_000);
    const state = await waitForStatus(s.deliveryId, 'FAILED', 10_000);
    const gaps = requests.slice(1).map((r, i) => (r.arrivedAt - requests[i]!.arrivedAt) / 1000);
    console.log(`      measured retry gaps: ${gaps.map((g) => g.toFixed(2)).join(' s, ')} s`);
    for (const [i, expected] of [1, 5, 15].entries()) {
      const gap = gaps[i]!;
      assert.ok(
        gap >= expected - 0.1 && gap <= expected + 2,
        `gap ${i + 1} is ${gap}s, expected about ${expected}s`,
      );
    }
    const timestamps = requests.map((r) => Number(r.headers['x-svc-timestamp']));
    for (let i = 1; i < timestamps.length; i++)
      assert.ok(timestamps[i]! > timestamps[i - 1]!, 'fresh timestamp');
    assert.equal(new Set(requests.map((r) => r.headers['x-svc-signature'])).size, 4);
    for (const r of requests) assert.ok(verifySignature(s.endpoint.secret, r));
    assert.deepEqual(
      state.attempts.map((a) => [a.series, a.attempt, a.statusCode]),
      [1, 2, 3, 4].map((n) => [1, n, 500]),
    );
    // The series' workflow has ended: nothing can post after its last attempt.
    await assert.rejects(
      s.outcome(),
      (err) =>
        err instanceof WorkflowFailedError &&
        err.cause instanceof ApplicationFailure &&
        err.cause.type === DELIVERY_FAILED_TYPE,
    );
    assert.equal(s.receiver.requests.length, 4, 'nothing after the last attempt');
  });

  it('redelivers a FAILED delivery as a new series once the receiver recovers', async () => {
    const s = await failing;
    await waitForStatus(s.deliveryId, 'FAILED', 40_000);
    s.receiver.program([], { status: 200, body: 'ok' });
    const res = await fetch(`${gateway.url}/api/webhook-deliveries/${s.deliveryId}/redeliver`, {
      method: 'POST',
      headers: { cookie: s.user.cookie, origin: gateway.url },
    });
    assert.equal(res.status, 202);
    const { delivery } = (await res.json()) as { delivery: { id: string; status: string } };
    assert.equal(delivery.id, s.deliveryId);
    // The answer reads the delivery after starting its new series, which may have landed already.
    assert.ok(['PENDING', 'DELIVERED'].includes(delivery.status), delivery.status);

    const state = await waitForStatus(s.deliveryId, 'DELIVERED');
    assert.equal(state.series, 2);
    assert.deepEqual(
      state.attempts.at(-1) && [state.attempts.at(-1)!.series, state.attempts.at(-1)!.attempt],
      [2, 1],
    );
    const last = s.receiver.requests.at(-1)!;
    assert.ok(verifySignature(s.endpoint.secret, last));
    assert.equal(last.headers['x-svc-delivery-id'], s.deliveryId);

    const list = await fetch(`${gateway.url}/api/webhook-endpoints/${s.endpoint.id}/deliveries`, {
      headers: { cookie: s.user.cookie },
    });
    assert.equal(list.status, 200);
    const page = (await list.json()) as {
      data: {
        id: string;
        status: string;
        deliveredAt: string | null;
        attempts: { series: number; responseBody: string }[];
      }[];
    };
    assert.equal(page.data[0]?.id, s.deliveryId);
    assert.equal(page.data[0]?.status, 'DELIVERED');
    assert.ok(page.data[0]?.deliveredAt);
    assert.equal(page.data[0]?.attempts.length, 5);
    assert.equal(page.data[0]?.attempts[0]?.responseBody, 'nope');
  });

  it('records a timed-out attempt after about 10 s, then delivers on the retry', async () => {
    const s = await hanging;
    const state = await waitForStatus(s.deliveryId, 'DELIVERED', 40_000);
    assert.equal(state.attempts.length, 2);
    const [timedOut, ok] = state.attempts;
    assert.equal(timedOut?.statusCode, null);
    assert.match(timedOut?.error ?? '', /TIMEOUT/);
    assert.ok(
      timedOut!.durationMs >= 9_900 && timedOut!.durationMs < 12_000,
      `took ${timedOut!.durationMs} ms`,
    );
    assert.equal(ok?.statusCode, 204);
  });

  it('sends nothing more to an endpoint deleted between attempts', async () => {
    const s = await deleted;
    const state = await waitForStatus(s.deliveryId, 'FAILED', 20_000);
    assert.equal(state.attempts.length, 1);
    assert.equal(s.receiver.requests.length, 1);
  });

  it("makes the first attempt in its workflow's first task, started eagerly on the worker that recorded the event", async () => {
    const s = await landing;
    assert.equal(s.start, 'eager', "the first task came back with the start's answer");
    const [request] = await s.receiver.waitForRequests(1, 20_000);
    assert.ok(request);
    assert.ok(verifySignature(s.endpoint.secret, request));
    assert.equal(await s.outcome(), 'DELIVERED');
    const events = (await s.workflow().fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowTaskCompletedEventAttributes).length, 1, 'one workflow task');
    assert.equal(events.filter((e) => e.activityTaskScheduledEventAttributes).length, 0, 'no activity task');
    assert.equal(
      events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
      1,
      'one local activity',
    );
    const state = await deliveryState(s.deliveryId);
    assert.deepEqual(
      state.attempts.map((a) => [a.attempt, a.statusCode]),
      [[1, 200]],
    );
    assert.equal(s.receiver.requests.length, 1);
  });

  it('lets a first attempt in flight finish when its worker is stopped', async () => {
    const user = await createTestUser();
    // Answered 2 s after it arrives, while the worker is stopping.
    const r = await receiver([{ status: 200, delayMs: 2_000 }]);
    await createEndpoint(user, r.url);
    // A worker of its own (its own queue, so it takes none of the other tests' tasks), stopped as
    // SIGTERM stops one: a first attempt, a local activity, is let finish.
    const stopping = await startWorker({
      config: { ...config, TEMPORAL_TASK_QUEUE: `${config.TEMPORAL_TASK_QUEUE}-stopping` },
      shutdownGraceMs: 10_000,
    });
    let deliveryId: string | undefined;
    try {
      const { deliveryIds } = await emitter.emitWebhookEvent(agentCompleted(user), stopping);
      deliveryId = deliveryIds[0];
      await r.waitForRequests(1, 10_000);
    } finally {
      await stopping.stop();
    }
    // The stop ended only once the attempt was answered and recorded: delivered, attempt 1.
    assert.ok(deliveryId);
    const state = await deliveryState(deliveryId);
    assert.equal(state.status, 'DELIVERED');
    assert.deepEqual(
      state.attempts.map((a) => [a.attempt, a.statusCode]),
      [[1, 200]],
    );
  });
});
