import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startReconciler } from '../../operations/runs';
import { reconcilerRepairs } from '../../core/metrics/registry';
import { claimPlanDecision } from '../../core/runs/store';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { receiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { ScriptedModel } from '../support/scripted-model';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { createWebhookEndpoint, recordEvent } from '../support/webhooks';
import { startWorker, type TestWorker } from '../../testkit/worker';

/**
 * The safety net: what the normal path left undone is found and done, and counted. Each case
 * breaks the normal path by hand the way a bug, a crash or an operator would.
 */
describe('the reconciler', function () {
  this.timeout(90_000);
  let gateway: TestGateway;
  let idle: TestGateway;
  let worker: TestWorker;
  let receiver: HttpsReceiver;
  let user: TestUser;
  const model = new ScriptedModel([]);

  before(async () => {
    const stack = await testStack();
    const { caFile } = await receiverCertificate();
    const config = stack.config({
      TEMPORAL_TASK_QUEUE: `reconcile-${randomUUID()}`,
      OUTBOUND_CA_FILE: caFile,
    });
    worker = await startWorker({ config, deps: { model } });
    gateway = await startGateway({ config });
    // No worker polls this one: its runs stay as admission left them.
    idle = await startGateway({ config: stack.config({ TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}` }) });
    receiver = await startHttpsReceiver();
  });
  after(async () => {
    await receiver.close();
    await idle.close();
    await gateway.close();
    await worker.stop();
  });
  beforeEach(async () => {
    user = await createTestUser();
    await createWebhookEndpoint(gateway.url, user, receiver.url, ['agent.failed', 'agent.completed']);
  });

  const repairs = async (kind: string) =>
    (await reconcilerRepairs.get()).values.find((v) => v.labels.kind === kind)?.value ?? 0;

  async function send(base: TestGateway, body: object) {
    const res = await fetch(`${base.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 202);
    return (await res.json()) as { chatId: string; runId: string };
  }

  async function run(runId: string) {
    const { db } = await testStack();
    return (await db.pool.query(`SELECT status::text, error FROM "Run" WHERE id = $1`, [runId])).rows[0] as {
      status: string;
      error: string | null;
    };
  }

  const failedEventFor = (runId: string) =>
    receiver
      .waitForRequests(1)
      .then(() =>
        waitFor(async () =>
          receiver.requests
            .map((r) => JSON.parse(r.rawBody.toString('utf8')) as { event: string; data: { runId: string } })
            .find((e) => e.event === 'agent.failed' && e.data.runId === runId),
        ),
      );

  /**
   * The test database is shared by every suite: a first pass ends whatever run another suite left
   * behind, so a test's repair count is its own run's alone.
   */
  const onePass = async () => {
    const reconciler = startReconciler(gateway.deps, 60_000);
    try {
      return await reconciler.pass();
    } finally {
      await reconciler.stop();
    }
  };
  const sweepLeftovers = onePass;

  it('ends a run whose execution an operator terminated, with its one agent.failed, and counts the repair', async () => {
    await sweepLeftovers();
    const turn = await send(idle, { text: 'never taken' });
    const { db, temporal } = await testStack();
    const execution = temporal.client.workflow.getHandle(turn.chatId);
    // A send on a busy machine may answer before its workflow's start (`triggerRunId: null`): the
    // operator terminates an execution that exists.
    await waitFor(() => execution.describe().catch(() => undefined), {
      what: "the run's execution to start",
    });
    await execution.terminate('stuck, says the operator');
    const before = await repairs('closed_execution');
    const reconciler = startReconciler(gateway.deps, 60_000);
    try {
      await waitFor(async () => ((await reconciler.pass())?.runsEnded ? true : undefined), {
        what: 'visibility to show the closed execution',
      });
    } finally {
      await reconciler.stop();
    }
    assert.deepEqual(await run(turn.runId), {
      status: 'FAILED',
      error: 'The run stopped before it finished.',
    });
    assert.equal((await repairs('closed_execution')) - before, 1);
    assert.ok(await failedEventFor(turn.runId));
    // Asked again, it leaves this run alone. (The database is shared by every suite, so another
    // suite's leftover may be ended by the same pass: the check is this run's.)
    const ended = await db.pool.query<{ updatedAt: Date }>(`SELECT "updatedAt" FROM "Run" WHERE id = $1`, [
      turn.runId,
    ]);
    const again = startReconciler(gateway.deps, 60_000);
    try {
      await again.pass();
    } finally {
      await again.stop();
    }
    const after = await db.pool.query<{ updatedAt: Date }>(`SELECT "updatedAt" FROM "Run" WHERE id = $1`, [
      turn.runId,
    ]);
    assert.deepEqual(
      after.rows[0]?.updatedAt,
      ended.rows[0]?.updatedAt,
      'the ended run is not touched again',
    );
  });

  it('ends an active run whose execution Temporal no longer has', async () => {
    await sweepLeftovers();
    const turn = await send(idle, { text: 'lost' });
    const { db, temporal } = await testStack();
    await temporal.client.workflow.getHandle(turn.chatId).terminate('as if lost');
    // The row says an execution took it, one Temporal never heard of, and then stopped moving.
    await db.pool.query(
      `UPDATE "Run" SET status = 'RUNNING', "triggerRunId" = $2, "updatedAt" = now() - interval '1 hour' WHERE id = $1`,
      [turn.runId, randomUUID()],
    );
    const before = await repairs('lost_execution');
    const reconciler = startReconciler(gateway.deps, 60_000);
    try {
      await reconciler.pass();
    } finally {
      await reconciler.stop();
    }
    assert.equal((await run(turn.runId)).status, 'FAILED');
    assert.equal((await repairs('lost_execution')) - before, 1);
    assert.ok(await failedEventFor(turn.runId));
  });

  it('leaves a completed execution to the stale look: its run, left active by a bug, ends once it stops moving', async () => {
    await sweepLeftovers();
    const turn = await send(gateway, { text: 'completes' });
    const { db, temporal } = await testStack();
    await temporal.client.workflow.getHandle(turn.chatId).result();
    // As if the workflow had completed without ending its run.
    await db.pool.query(`UPDATE "Run" SET status = 'RUNNING', "finishedAt" = NULL WHERE id = $1`, [
      turn.runId,
    ]);
    const closedBefore = await repairs('closed_execution');
    const lostBefore = await repairs('lost_execution');
    await onePass();
    assert.equal((await run(turn.runId)).status, 'RUNNING', 'a Completed execution is not looked at');
    await db.pool.query(`UPDATE "Run" SET "updatedAt" = now() - interval '1 hour' WHERE id = $1`, [
      turn.runId,
    ]);
    await onePass();
    assert.deepEqual(await run(turn.runId), {
      status: 'FAILED',
      error: 'The run stopped before it finished.',
    });
    assert.equal((await repairs('closed_execution')) - closedBefore, 0);
    assert.equal((await repairs('lost_execution')) - lostBefore, 1);
  });

  it('starts a delivery whose workflow never started', async () => {
    const { db } = await testStack();
    const runId = randomUUID();
    const deliveries = await recordEvent(db.pool, {
      userId: user.userId,
      event: 'agent.completed',
      idempotencyKey: runId,
      data: {
        chatId: randomUUID(),
        runId,
        messageId: randomUUID(),
        traceId: 'a'.repeat(32),
        processId: randomUUID(),
        status: 'COMPLETE',
        assistantMessageId: randomUUID(),
      },
    });
    assert.equal(deliveries.length, 1);
    // Temporal was away when the event was recorded, a while ago.
    await db.pool.query(
      `UPDATE "WebhookDelivery" SET "updatedAt" = now() - interval '1 minute' WHERE id = $1`,
      [deliveries[0]?.deliveryId],
    );
    const reconciler = startReconciler(gateway.deps, 60_000);
    try {
      assert.equal((await reconciler.pass())?.deliveriesStarted, 1);
    } finally {
      await reconciler.stop();
    }
    await waitFor(async () =>
      receiver.requests.some((r) => r.headers['x-svc-delivery-id'] === deliveries[0]?.deliveryId)
        ? true
        : undefined,
    );
  });

  it('sends a claimed plan decision again when its signal was lost', async () => {
    model.replies.push(
      { text: 'Plan.', toolCalls: [{ id: 'c1', toolName: 'no_such_tool', input: {} }] },
      { text: 'Done.', toolCalls: [] },
    );
    const turn = await send(gateway, { text: 'plan it', planMode: true });
    const { db } = await testStack();
    const waitpointId = await waitFor(async () => {
      const { rows } = await db.pool.query<{ id: string }>(
        `SELECT id FROM "Waitpoint" WHERE "runId" = $1 AND status = 'PENDING'`,
        [turn.runId],
      );
      return rows[0]?.id;
    });
    // The decision is claimed, but the process dies before it signals.
    const claimed = await claimPlanDecision(
      db.pool,
      { userId: user.userId, ...turn, waitpointId },
      { approved: true },
      { userId: user.userId, apiKeyId: user.apiKeyId, via: 'rest' },
    );
    assert.equal(typeof claimed, 'object');
    await db.pool.query(`UPDATE "Waitpoint" SET "resolvedAt" = now() - interval '1 minute' WHERE id = $1`, [
      waitpointId,
    ]);
    const reconciler = startReconciler(gateway.deps, 60_000);
    try {
      assert.equal((await reconciler.pass())?.signalsResent, 1);
    } finally {
      await reconciler.stop();
    }
    const done = await waitFor(async () => {
      const r = await run(turn.runId);
      return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(r.status) ? r : undefined;
    });
    assert.equal(done.status, 'COMPLETE');
  });
});
