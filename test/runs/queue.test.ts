import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDatabase, type Database } from '../../core/db/client';
import type { Config } from '../../core/config/config';
import { startDispatcher, type QueuedTurn } from '../../operations/runs';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

interface Snapshot {
  id: string;
  status: string;
  text: string;
  waitingFor: { kind: string; position?: number } | null;
}

const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];

/**
 * onActiveRun on a send (issue 49): "enqueue" admits the turn behind the chat's run, and the turns
 * start strictly in order, each once, across gateways; "interrupt" cancels the chat's run and the
 * turn runs next, as one decision. Two gateways with their own pools send, as two processes would.
 */
describe('a send to a busy chat: onActiveRun enqueue and interrupt', function () {
  this.timeout(5 * 60_000);
  let config: Config;
  let worker: TestWorker;
  let model: ScriptedModel;
  let gateways: TestGateway[];
  let db2: Database;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    model = new ScriptedModel([]);
    config = stack.config({ TEMPORAL_TASK_QUEUE: `queue-${randomUUID()}`, MAX_QUEUED_TURNS_PER_CHAT: '10' });
    worker = await startWorker({ config, model });
    db2 = createDatabase({ url: stack.databaseUrl, poolSize: 10 });
    gateways = [await startGateway({ config }), await startGateway({ config, deps: { db: db2 } })];
  });
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close();
    await db2?.close();
    await worker?.stop();
  });
  beforeEach(async () => {
    user = await createTestUser();
    model.replies.length = 0;
    model.release();
  });

  const sendAt = (gateway: TestGateway, body: Record<string, unknown>) =>
    fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });
  const admitted = async (res: Response): Promise<QueuedTurn> => {
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as QueuedTurn;
  };
  const snapshot = async (chatId: string, runId: string): Promise<Snapshot> => {
    const res = await fetch(`${gateways[0]!.url}/api/v1/chats/${chatId}/runs/${runId}`, {
      headers: user.bearer,
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as Snapshot;
  };
  const ended = (chatId: string, runId: string) =>
    waitFor(
      async () => {
        const s = await snapshot(chatId, runId);
        return TERMINAL.includes(s.status) ? s : undefined;
      },
      { what: `run ${runId} to end` },
    );
  /** The terminal statuses the run's event stream announced, in order. */
  const terminalEvents = async (runId: string) => {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ status: string }>(
      `SELECT data->>'status' AS status FROM "RunEvent"
        WHERE "runId" = $1 AND type = 'status' AND data->>'status' IN ('COMPLETE', 'FAILED', 'CANCELLED') ORDER BY seq`,
      [runId],
    );
    return rows.map((r) => r.status);
  };
  /** The last user text of each model call, in the order the model was called. */
  const asked = () =>
    model.calls.map((messages) => {
      const last = messages.filter((m) => m.role === 'user').at(-1);
      return last?.role === 'user' ? last.text : '';
    });
  /** A chat whose run holds in its model step until model.release(). */
  const busyChat = async (): Promise<QueuedTurn> => {
    model.holdAtStart();
    const head = await admitted(await sendAt(gateways[0]!, { text: 'head turn' }));
    await waitFor(async () =>
      (await snapshot(head.chatId, head.runId)).status === 'RUNNING' ? true : undefined,
    );
    return head;
  };

  it('queues concurrent sends over two gateways and runs every turn once, in order, each after the answer before it', async () => {
    const head = await busyChat();
    const texts = Array.from({ length: 8 }, (_, i) => `queued ${i}`);
    const turns = await Promise.all(
      texts.map(async (text, i) =>
        admitted(await sendAt(gateways[i % 2]!, { text, chatId: head.chatId, onActiveRun: 'enqueue' })),
      ),
    );
    // Each has its own place; the places are 1..8, whichever gateway admitted it.
    assert.deepEqual(
      turns.map((t) => t.queuePosition).sort((a, b) => Number(a) - Number(b)),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    for (const t of turns) {
      assert.equal(t.status, 'queued');
      assert.equal(t.triggerRunId, null);
      assert.deepEqual((await snapshot(t.chatId, t.runId)).waitingFor, {
        kind: 'queue',
        position: t.queuePosition,
      });
    }
    assert.equal((await snapshot(head.chatId, head.runId)).waitingFor, null);
    const inOrder = [...turns].sort((a, b) => Number(a.queuePosition) - Number(b.queuePosition));

    model.release();
    for (const t of [head, ...inOrder]) assert.equal((await ended(t.chatId, t.runId)).status, 'COMPLETE');
    // Each turn reached the model once, in its place's order, and each answered its own message.
    const order = inOrder.map((t) => texts[turns.indexOf(t)]);
    assert.deepEqual(asked().slice(-9), ['head turn', ...order]);
    for (const t of [head, ...inOrder]) assert.deepEqual(await terminalEvents(t.runId), ['COMPLETE']);
    // Each turn's model call saw the answers of the turns before it, and none of the turns after it.
    const last = model.calls.at(-1)!;
    assert.deepEqual(
      last.map((m) => m.role),
      Array.from({ length: 9 }, () => ['user', 'assistant'])
        .flat()
        .slice(0, 17),
    );
    const second = model.calls.at(-8)!;
    assert.equal(second.filter((m) => m.role === 'user').length, 2);

    // One execution per run, chained in the chat's one workflow id.
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ triggerRunId: string }>(
      `SELECT "triggerRunId" FROM "Run" WHERE "chatId" = $1`,
      [head.chatId],
    );
    assert.equal(new Set(rows.map((r) => r.triggerRunId)).size, 9);
  });

  it('ends a queued turn that is cancelled at once, never runs it, and moves the ones behind it up', async () => {
    const head = await busyChat();
    const [a, b, c] = [
      await admitted(await sendAt(gateways[0]!, { text: 'A', chatId: head.chatId, onActiveRun: 'enqueue' })),
      await admitted(await sendAt(gateways[1]!, { text: 'B', chatId: head.chatId, onActiveRun: 'enqueue' })),
      await admitted(await sendAt(gateways[0]!, { text: 'C', chatId: head.chatId, onActiveRun: 'enqueue' })),
    ] as [QueuedTurn, QueuedTurn, QueuedTurn];
    assert.deepEqual([a.queuePosition, b.queuePosition, c.queuePosition], [1, 2, 3]);

    const cancel = await fetch(`${gateways[1]!.url}/api/v1/chats/${b.chatId}/runs/${b.runId}/cancel`, {
      method: 'POST',
      headers: user.bearer,
    });
    assert.equal(cancel.status, 202, await cancel.clone().text());
    // No execution has it: it ends now, with its agent.failed, while the head still runs.
    const cancelled = await snapshot(b.chatId, b.runId);
    assert.equal(cancelled.status, 'CANCELLED');
    assert.equal(cancelled.waitingFor, null);
    assert.deepEqual(await terminalEvents(b.runId), ['CANCELLED']);
    assert.equal((await snapshot(head.chatId, head.runId)).status, 'RUNNING');
    assert.deepEqual((await snapshot(c.chatId, c.runId)).waitingFor, { kind: 'queue', position: 2 });
    const again = await fetch(`${gateways[0]!.url}/api/v1/chats/${b.chatId}/runs/${b.runId}/cancel`, {
      method: 'POST',
      headers: user.bearer,
    });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { code: string }).code, 'RUN_NOT_ACTIVE');

    model.release();
    for (const t of [head, a, c]) assert.equal((await ended(t.chatId, t.runId)).status, 'COMPLETE');
    assert.deepEqual(asked().slice(-3), ['head turn', 'A', 'C']);
    assert.deepEqual(await terminalEvents(b.runId), ['CANCELLED']);
  });

  it("answers 409 QUEUE_FULL past the chat's queue cap, and writes nothing", async () => {
    const stack = await testStack();
    const capped = await startGateway({
      config: stack.config({
        TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
        MAX_QUEUED_TURNS_PER_CHAT: '2',
      }),
    });
    try {
      const head = await busyChat();
      for (const text of ['one', 'two'])
        await admitted(await sendAt(capped, { text, chatId: head.chatId, onActiveRun: 'enqueue' }));
      const count = async () =>
        (
          await stack.db.pool.query(`SELECT count(*)::int AS n FROM "Message" WHERE "chatId" = $1`, [
            head.chatId,
          ])
        ).rows[0] as { n: number };
      const before = await count();
      const full = await sendAt(capped, { text: 'three', chatId: head.chatId, onActiveRun: 'enqueue' });
      assert.equal(full.status, 409);
      const body = (await full.json()) as { code: string; error: string };
      assert.equal(body.code, 'QUEUE_FULL');
      assert.match(body.error, /2 turns queued/);
      assert.deepEqual(await count(), before);
      // Without onActiveRun, the spec's answer is unchanged.
      const rejected = await sendAt(capped, { text: 'three', chatId: head.chatId });
      assert.equal(rejected.status, 409);
      assert.equal(((await rejected.json()) as { code: string }).code, 'RUN_ACTIVE');
      model.release();
      await waitFor(async () => {
        const { rows } = await stack.db.pool.query(
          `SELECT 1 FROM "Run" WHERE "chatId" = $1 AND status NOT IN ('COMPLETE', 'FAILED', 'CANCELLED')`,
          [head.chatId],
        );
        return rows.length === 0 ? true : undefined;
      });
    } finally {
      await capped.close();
    }
  });

  it('answers a bad onActiveRun with 400 naming the field, and writes nothing', async () => {
    const head = await busyChat();
    const stack = await testStack();
    const runs = async () =>
      (await stack.db.pool.query(`SELECT count(*)::int AS n FROM "Run" WHERE "userId" = $1`, [user.userId]))
        .rows[0];
    const before = await runs();
    for (const onActiveRun of ['queue', '', 1, null]) {
      const res = await sendAt(gateways[0]!, { text: 'x', chatId: head.chatId, onActiveRun });
      assert.equal(res.status, 400);
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.deepEqual(
        body.details.map((d) => d.path),
        ['body.onActiveRun'],
      );
    }
    assert.deepEqual(await runs(), before);
    model.release();
    await ended(head.chatId, head.runId);
  });

  it('interrupts the running turn: it ends CANCELLED as any cancel does and the new turn runs next', async () => {
    const head = await busyChat();
    const queued = await admitted(
      await sendAt(gateways[0]!, { text: 'queued behind', chatId: head.chatId, onActiveRun: 'enqueue' }),
    );
    const turn = await admitted(
      await sendAt(gateways[1]!, { text: 'stop, do this', chatId: head.chatId, onActiveRun: 'interrupt' }),
    );
    assert.equal(turn.queuePosition, 1);
    assert.deepEqual(turn.interruptedRunIds, [head.runId]);
    const stopped = await ended(head.chatId, head.runId);
    assert.equal(stopped.status, 'CANCELLED');
    assert.deepEqual(await terminalEvents(head.runId), ['CANCELLED']);
    model.release();
    assert.equal((await ended(turn.chatId, turn.runId)).status, 'COMPLETE');
    assert.equal((await ended(queued.chatId, queued.runId)).status, 'COMPLETE');
    assert.deepEqual(asked().slice(-3), ['head turn', 'stop, do this', 'queued behind']);
    // The interrupting turn's model call did not see the turn still waiting behind it.
    const interrupting = model.calls.at(-2)!;
    assert.ok(!interrupting.some((m) => m.role === 'user' && m.text === 'queued behind'));
  });

  it('interrupts a chat with no run as a plain send', async () => {
    model.holdAtStart();
    const first = await admitted(await sendAt(gateways[0]!, { text: 'first' }));
    model.release();
    await ended(first.chatId, first.runId);
    const turn = await admitted(
      await sendAt(gateways[1]!, { text: 'second', chatId: first.chatId, onActiveRun: 'interrupt' }),
    );
    assert.equal(turn.queuePosition, null);
    assert.deepEqual(turn.interruptedRunIds, []);
    assert.equal((await ended(turn.chatId, turn.runId)).status, 'COMPLETE');
  });

  it('decides an interrupt racing the run it interrupts as one: never two active runs, never neither', async () => {
    const { db } = await testStack();
    for (let i = 0; i < 6; i++) {
      const head = await busyChat();
      // Watch the chat throughout: at each look it has one head run at most, and while any of its
      // runs is not over (the head, or the turn queued behind it), exactly one.
      let watching = true;
      const looks: { heads: number; active: number }[] = [];
      const watch = (async () => {
        while (watching) {
          const { rows } = await db.pool.query<{ heads: number; active: number }>(
            `SELECT count(*) FILTER (WHERE "queueSeq" IS NULL)::int AS heads, count(*)::int AS active
               FROM "Run" WHERE "chatId" = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')`,
            [head.chatId],
          );
          looks.push(rows[0]!);
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      // The head's model answers as the interrupt arrives.
      const [res] = await Promise.all([
        sendAt(gateways[i % 2]!, { text: `interrupt ${i}`, chatId: head.chatId, onActiveRun: 'interrupt' }),
        Promise.resolve().then(() => model.release()),
      ]);
      const turn = await admitted(res);
      const done = await ended(turn.chatId, turn.runId);
      watching = false;
      await watch;
      assert.equal(done.status, 'COMPLETE');
      const headEnd = await ended(head.chatId, head.runId);
      // Either the head finished first (the turn ran as a plain send) or the interrupt won.
      assert.equal(headEnd.status, turn.interruptedRunIds?.length ? 'CANCELLED' : 'COMPLETE');
      assert.equal((await terminalEvents(head.runId)).length, 1);
      assert.deepEqual(await terminalEvents(turn.runId), ['COMPLETE']);
      assert.ok(looks.length > 1);
      for (const look of looks) assert.equal(look.heads, look.active > 0 ? 1 : 0, JSON.stringify(looks));
    }
  });

  it('starts a queued turn whose chat was left with no head (an ending that did not promote it), once', async () => {
    const stack = await testStack();
    const head = await busyChat();
    const turn = await admitted(
      await sendAt(gateways[0]!, { text: 'left behind', chatId: head.chatId, onActiveRun: 'enqueue' }),
    );
    // As an ending by an older release would: the head's row ends and its execution is gone,
    // without promoting the turn behind it.
    await stack.temporal.client.workflow.getHandle(head.chatId).terminate('test: the head ends elsewhere');
    await stack.db.pool.query(`UPDATE "Run" SET status = 'FAILED', "finishedAt" = now() WHERE id = $1`, [
      head.runId,
    ]);
    model.release();
    const dispatchers = [startDispatcher(gateways[0]!.deps, 200), startDispatcher(gateways[1]!.deps, 200)];
    try {
      assert.equal((await ended(turn.chatId, turn.runId)).status, 'COMPLETE');
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
    assert.deepEqual(
      asked().filter((t) => t === 'left behind'),
      ['left behind'],
    );
    assert.deepEqual(await terminalEvents(turn.runId), ['COMPLETE']);
  });
});
