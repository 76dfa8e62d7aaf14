import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../core/logging/logger';
import type { ModelProvider, ModelReply, ModelRequest } from '../../core/model/types';
import { startReconciler } from '../../operations/runs';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { receiverCertificate, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { memoryStream } from '../support/log-sink';
import { seededRandom } from '../support/random';
import { createWebhookEndpoint } from '../support/webhooks';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

/**
 * Cancel, delete, approve and reject at random moments of a turn (right after the send, during the
 * model step, during a tool, while the plan waits, during the finish), many times over, checking
 * each time what DECISIONS promises: the run ends within seconds, the chat takes the next send,
 * exactly one terminal event that matches the final status, a 202 cancel always wins, one
 * tool.completed and one charge per successful tool call, and no waitpoint left PENDING. The
 * reconciler runs alongside: a repair would mean the normal path failed, so none may happen.
 *
 * RACE_ITERATIONS sets the tries per scenario (CI runs a few; run 200 locally), RACE_SEED
 * replays a run (the seed is printed).
 */
const ITERATIONS = Number(process.env.RACE_ITERATIONS ?? 12);
const SEED = Number(process.env.RACE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];
const ENDS_WITHIN_MS = 10_000;

/**
 * A model whose reply takes a random while (streaming in pieces, stopping when cancelled), so a
 * cancel can land before, during or after it: "tool" asks for an image, anything else is text.
 */
class RacingModel implements ModelProvider {
  readonly name = 'racing';
  constructor(private readonly delay: () => number) {}

  async complete(request: ModelRequest): Promise<ModelReply> {
    const last = request.messages[request.messages.length - 1];
    const wantsTool = last?.role === 'user' && /\btool\b/.test(last.text);
    const reply: ModelReply = wantsTool
      ? {
          text: 'Drawing.',
          toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a lighthouse' } }],
        }
      : { text: 'Here is my answer, in a few pieces.', toolCalls: [] };
    for (const piece of reply.text.match(/.{1,8}/g) ?? []) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, this.delay());
        request.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('cancelled'));
        });
      });
      request.onText(piece);
    }
    return reply;
  }
}

interface Snapshot {
  status: string;
  toolCalls: { id: string; status: string }[];
  waitpoints: { id: string; status: string }[];
}

interface Outcome {
  scenario: string;
  status: string;
  cancel?: number;
  decisions?: number[];
}

describe('cancel, delete and decide at any moment', function () {
  this.timeout(30 * 60_000);
  const random = seededRandom(SEED);
  let gateway: TestGateway;
  let worker: TestWorker;
  let receiver: HttpsReceiver;
  let reconciler: ReturnType<typeof startReconciler>;
  // The reconciler's log: each repair names its run. The database is shared with every other
  // suite of the run, whose leftover runs this reconciler may repair too; only ours count.
  const reconcilerLog = memoryStream();
  const userIds: string[] = [];
  const outcomes: Outcome[] = [];

  before(async () => {
    process.stdout.write(
      `      seed ${SEED}, ${ITERATIONS} tries per scenario (RACE_SEED, RACE_ITERATIONS)\n`,
    );
    const { caFile } = await receiverCertificate();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `races-${randomUUID()}`,
      OUTBOUND_CA_FILE: caFile,
      IMAGE_PROVIDER: 'local-preview',
      SEND_RATE_LIMIT_PER_MINUTE: '100000',
      API_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    worker = await startWorker({ config, deps: { model: new RacingModel(() => Math.floor(random() * 40)) } });
    gateway = await startGateway({ config });
    receiver = await startHttpsReceiver();
    const logger = createLogger({ level: 'error', name: 'reconciler' }, reconcilerLog.stream);
    reconciler = startReconciler({ ...gateway.deps, logger }, 1_000);
  });
  after(async () => {
    await reconciler?.stop();
    await receiver?.close();
    await gateway?.close();
    await worker?.stop();
    const table = new Map<string, Map<string, number>>();
    for (const o of outcomes) {
      const row = table.get(o.scenario) ?? new Map<string, number>();
      const key = `${o.status}${o.cancel ? ` (cancel ${o.cancel})` : ''}${o.decisions ? ` (${o.decisions.join('/')})` : ''}`;
      row.set(key, (row.get(key) ?? 0) + 1);
      table.set(o.scenario, row);
    }
    for (const [scenario, row] of table)
      process.stdout.write(`      ${scenario}: ${[...row].map(([k, n]) => `${n}× ${k}`).join(', ')}\n`);
  });

  async function subscribedUser(): Promise<TestUser> {
    const user = await createTestUser();
    userIds.push(user.userId);
    await createWebhookEndpoint(gateway.url, user, receiver.url, [
      'agent.started',
      'agent.completed',
      'agent.failed',
      'tool.completed',
    ]);
    return user;
  }

  const call = (user: TestUser, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function send(user: TestUser, body: object): Promise<{ chatId: string; runId: string }> {
    const res = await call(user, 'POST', '/api/v1/completions', body);
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { chatId: string; runId: string };
  }

  const runPath = (t: { chatId: string; runId: string }) => `/api/v1/chats/${t.chatId}/runs/${t.runId}`;
  const pause = (maxMs: number) =>
    new Promise((resolve) => setTimeout(resolve, Math.floor(random() * maxMs)));

  /** The run's row as the tables hold it, whether or not its chat is deleted. */
  async function row(runId: string): Promise<Snapshot> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<Snapshot>(
      `SELECT r.status::text AS status,
              COALESCE((SELECT jsonb_agg(jsonb_build_object('id', t.id, 'status', t.status)) FROM "ToolCall" t
                         WHERE t."runId" = r.id), '[]') AS "toolCalls",
              COALESCE((SELECT jsonb_agg(jsonb_build_object('id', w.id, 'status', w.status)) FROM "Waitpoint" w
                         WHERE w."runId" = r.id), '[]') AS waitpoints
         FROM "Run" r WHERE r.id = $1`,
      [runId],
    );
    assert.ok(rows[0], 'the run exists');
    return rows[0];
  }

  async function ended(runId: string): Promise<Snapshot> {
    return waitFor(
      async () => {
        const r = await row(runId);
        return TERMINAL.includes(r.status) ? r : undefined;
      },
      { timeoutMs: ENDS_WITHIN_MS, what: `run ${runId} to end` },
    );
  }

  /** The events the receiver got for this run, once every delivery of it has settled. */
  async function eventsOf(
    runId: string,
    toolCallIds: string[],
  ): Promise<{ event: string; status?: string }[]> {
    const { db } = await testStack();
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ pending: number }>(
          `SELECT count(*)::int AS pending FROM "WebhookDelivery"
            WHERE "idempotencyKey" = ANY($1) AND status <> 'DELIVERED'`,
          [[runId, ...toolCallIds]],
        );
        return rows[0]?.pending === 0 ? true : undefined;
      },
      { what: 'the run’s deliveries' },
    );
    const keys = new Set([runId, ...toolCallIds]);
    return receiver.requests
      .map(
        (r) =>
          JSON.parse(r.rawBody.toString('utf8')) as {
            event: string;
            data: { runId?: string; toolCallId?: string; status?: string };
          },
      )
      .filter(
        (e) =>
          keys.has(e.data.runId ?? '') && (e.event !== 'tool.completed' || keys.has(e.data.toolCallId ?? '')),
      )
      .map((e) => ({ event: e.event, status: e.data.status }));
  }

  /** Every promise about how a run ends, checked from the tables and the receiver. */
  async function checkEnding(
    runId: string,
    expect: { cancelWon?: boolean; deleted?: boolean },
  ): Promise<string> {
    const r = await ended(runId);
    if (expect.cancelWon || expect.deleted) assert.equal(r.status, 'CANCELLED', 'a 202 cancel wins');
    assert.ok(
      r.waitpoints.every((w) => w.status !== 'PENDING'),
      `no waitpoint left PENDING: ${JSON.stringify(r.waitpoints)}`,
    );
    if (r.status === 'CANCELLED')
      assert.ok(
        r.waitpoints.every((w) => w.status !== 'EXPIRED'),
        'a cancelled plan is CANCELLED, not EXPIRED',
      );
    const succeeded = r.toolCalls.filter((t) => t.status === 'SUCCEEDED').map((t) => t.id);
    const events = await eventsOf(
      runId,
      r.toolCalls.map((t) => t.id),
    );
    const terminal = events.filter((e) => e.event === 'agent.completed' || e.event === 'agent.failed');
    assert.equal(terminal.length, 1, `one terminal event, got ${JSON.stringify(events)}`);
    assert.deepEqual(terminal[0], {
      event: r.status === 'COMPLETE' ? 'agent.completed' : 'agent.failed',
      status: r.status,
    });
    assert.equal(
      events.filter((e) => e.event === 'tool.completed').length,
      succeeded.length,
      'one tool.completed per success',
    );
    const { db } = await testStack();
    const charges = await db.pool.query<{ toolCallId: string }>(
      `SELECT "toolCallId" FROM "CreditLedgerEntry" WHERE "toolCallId" = ANY($1::uuid[])`,
      [r.toolCalls.map((t) => t.id)],
    );
    assert.deepEqual(
      charges.rows.map((c) => c.toolCallId).sort(),
      [...succeeded].sort(),
      'one charge per success',
    );
    return r.status;
  }

  /** The chat takes its next send: nothing is left active in it. */
  async function nextSendAccepted(user: TestUser, chatId: string): Promise<void> {
    const res = await call(user, 'POST', '/api/v1/completions', { text: 'and again', chatId });
    assert.equal(res.status, 202, `the next send: ${await res.clone().text()}`);
    const next = (await res.json()) as { runId: string };
    await checkEnding(next.runId, {});
  }

  async function cancelRace(scenario: string, body: object, maxDelayMs: number) {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      const turn = await send(user, body);
      await pause(maxDelayMs);
      const res = await call(user, 'POST', `${runPath(turn)}/cancel`);
      assert.ok([202, 409].includes(res.status), `cancel answered ${res.status}`);
      if (res.status === 409) assert.equal(((await res.json()) as { code: string }).code, 'RUN_NOT_ACTIVE');
      const status = await checkEnding(turn.runId, { cancelWon: res.status === 202 });
      outcomes.push({ scenario, status, cancel: res.status });
      await nextSendAccepted(user, turn.chatId);
    }
  }

  it('cancel right after the send', () => cancelRace('cancel at once', { text: 'hello' }, 0));
  it('cancel during the model step or its finish', () =>
    cancelRace('cancel mid-turn', { text: 'hello' }, 150));
  it('cancel during a tool call', () => cancelRace('cancel mid-tool', { text: 'use a tool' }, 400));

  it('delete the chat at any moment of a turn, or while a send into it is admitted', async () => {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      let runId: string | undefined;
      let chatId: string;
      if (i % 2 === 0) {
        const turn = await send(user, { text: 'use a tool' });
        ({ chatId, runId } = turn);
        await pause(300);
        assert.equal((await call(user, 'DELETE', `/api/v1/chats/${chatId}`)).status, 204);
      } else {
        chatId = (await send(user, { text: 'first' })).chatId;
        await waitFor(async () => ((await activeRuns(chatId)) === 0 ? true : undefined), {
          what: 'the first turn',
        });
        const [sent, deleted] = await Promise.all([
          call(user, 'POST', '/api/v1/completions', { text: 'use a tool', chatId }),
          pause(20).then(() => call(user, 'DELETE', `/api/v1/chats/${chatId}`)),
        ]);
        assert.equal(deleted.status, 204);
        assert.ok([202, 404].includes(sent.status), `the racing send answered ${sent.status}`);
        if (sent.status === 202) runId = ((await sent.json()) as { runId: string }).runId;
      }
      if (runId) outcomes.push({ scenario: 'delete', status: await checkEnding(runId, {}) });
      assert.equal(await activeRuns(chatId), 0, 'no run of a deleted chat stays active');
      const again = await call(user, 'POST', '/api/v1/completions', { text: 'hi', chatId });
      assert.equal(again.status, 404, 'a deleted chat takes no send');
    }
  });

  async function activeRuns(chatId: string): Promise<number> {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Run" WHERE "chatId" = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')`,
      [chatId],
    );
    return rows[0]?.n ?? 0;
  }

  it('approve, reject and cancel racing each other on a waiting plan', async () => {
    const user = await subscribedUser();
    for (let i = 0; i < ITERATIONS; i++) {
      const turn = await send(user, { text: 'use a tool', planMode: true });
      const waitpointId = await waitFor(async () => {
        const r = await row(turn.runId);
        if (TERMINAL.includes(r.status)) throw new Error(`the plan ended ${r.status} before it waited`);
        return r.waitpoints.find((w) => w.status === 'PENDING')?.id;
      });
      const decide = (approved: boolean) =>
        call(user, 'POST', `${runPath(turn)}/waitpoints/${waitpointId}/complete`, { approved }).then(
          (r) => r.status,
        );
      const moves = [
        () => decide(true),
        () => decide(false),
        () => call(user, 'POST', `${runPath(turn)}/cancel`).then((r) => r.status),
      ];
      // Two or three of them at once, in a random order with random gaps.
      const chosen = moves.filter(() => random() < 0.7);
      if (chosen.length < 2) chosen.push(moves[2]!);
      const answers = await Promise.all(chosen.map(async (move) => (await pause(50), move())));
      const cancelAnswer = chosen.includes(moves[2]!) ? answers[chosen.indexOf(moves[2]!)] : undefined;
      const decisionAnswers = answers.filter((_, k) => chosen[k] !== moves[2]);
      assert.ok(decisionAnswers.filter((s) => s === 202).length <= 1, 'one decision wins');
      const status = await checkEnding(turn.runId, { cancelWon: cancelAnswer === 202 });
      const r = await row(turn.runId);
      if (cancelAnswer !== 202 && decisionAnswers.includes(202)) {
        const decided = r.waitpoints[0]?.status;
        assert.ok(decided === 'APPROVED' || decided === 'REJECTED', `decided: ${decided}`);
        assert.equal(status, decided === 'APPROVED' ? 'COMPLETE' : 'CANCELLED');
      }
      outcomes.push({ scenario: 'plan races', status, cancel: cancelAnswer, decisions: decisionAnswers });
      await nextSendAccepted(user, turn.chatId);
    }
  });

  it('needed no repair by the reconciler', async () => {
    await reconciler.pass();
    const { rows } = await gateway.deps.db.pool.query<{ id: string }>(
      `SELECT id FROM "Run" WHERE "userId" = ANY($1::uuid[])`,
      [userIds],
    );
    const ours = new Set(rows.map((r) => r.id));
    assert.ok(ours.size > 0);
    const repaired = reconcilerLog
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; runId?: string })
      .filter((line) => line.msg.startsWith('reconciler ended a run') && ours.has(line.runId ?? ''));
    assert.deepEqual(repaired, [], 'the reconciler repaired a run: the normal path failed');
  });
});
