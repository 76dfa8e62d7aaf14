import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startTcpProxy } from '../support/tcp-proxy';
import { createLogger } from '../../core/logging/logger';
import { memoryStream } from '../support/log-sink';
import { waitFor } from '../support/wait';
import { startDispatcher } from '../../operations/runs';
import { admitTurn, type AdmittedTurn } from '../../operations/runs/admission';
import { createDatabase } from '../../core/db/client';
import { startRun } from '../../operations/runs/start';
import { metrics } from '../../core/metrics/registry';
import { sampleSum } from '../support/prometheus';
import sharp from 'sharp';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Counts {
  chats: number;
  messages: number;
  runs: number;
}

async function counts(userId: string): Promise<Counts> {
  const { db } = await testStack();
  const { rows } = await db.pool.query<{ chats: string; messages: string; runs: string }>(
    `SELECT (SELECT count(*) FROM "Chat" WHERE "userId" = $1) AS chats,
            (SELECT count(*) FROM "Message" m JOIN "Chat" c ON c.id = m."chatId" WHERE c."userId" = $1) AS messages,
            (SELECT count(*) FROM "Run" WHERE "userId" = $1) AS runs`,
    [userId],
  );
  const row = rows[0];
  return { chats: Number(row?.chats), messages: Number(row?.messages), runs: Number(row?.runs) };
}

describe('turn admission', () => {
  let gateway: TestGateway;
  let user: TestUser;

  // No worker polls this queue: admitted runs stay active, so admission is observed on its own.
  let storageDir: string;
  before(async () => {
    const stack = await testStack();
    storageDir = await mkdtemp(path.join(tmpdir(), 'svc-admission-'));
    gateway = await startGateway({
      config: stack.config({
        TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}`,
        STORAGE_LOCAL_DIR: storageDir,
        SEND_RATE_LIMIT_PER_MINUTE: '25',
        // No worker takes these runs: they stay active, and the send limit is what is tested here.
        MAX_ACTIVE_RUNS_PER_USER: '1000',
      }),
    });
  });
  after(() => gateway.close());
  beforeEach(async () => {
    user = await createTestUser();
  });

  const sendAt = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer, ...headers },
      body: JSON.stringify(body),
    });
  const send = (body: unknown, headers: Record<string, string> = {}) => sendAt(gateway.url, body, headers);
  /** A send that must be admitted (202), and its answer. */
  const queued = async (url: string, body: { text: string; chatId?: string }) => {
    const res = await sendAt(url, body);
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { runId: string; chatId: string; triggerRunId: string | null };
  };

  it('queues a turn in a new chat and starts its workflow, keyed by the chat id', async () => {
    const res = await send(
      { text: 'Hello there, this is the first message of a brand new chat that is long enough to be cut' },
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    );
    assert.equal(res.status, 202);
    const turn = (await res.json()) as Record<string, string>;
    assert.equal(turn.status, 'queued');

    const { db, temporal } = await testStack();
    const run = (await db.pool.query(`SELECT * FROM "Run" WHERE id = $1`, [turn.runId])).rows[0] as Record<
      string,
      unknown
    >;
    assert.equal(run.chatId, turn.chatId);
    assert.equal(run.messageId, turn.messageId);
    assert.equal(run.traceId, '4bf92f3577b34da6a3ce929d0e0e4736');
    // The run's own execution writes its id when it takes the run; no worker polls this queue.
    assert.equal(run.triggerRunId, null);
    assert.ok(run.assistantMessageId);
    const chat = (await db.pool.query(`SELECT * FROM "Chat" WHERE id = $1`, [turn.chatId])).rows[0] as Record<
      string,
      unknown
    >;
    assert.equal(chat.title, 'Hello there, this is the first message of a brand new chat t');
    assert.equal(chat.lastMessageId, turn.messageId);
    const message = (await db.pool.query(`SELECT * FROM "Message" WHERE id = $1`, [turn.messageId]))
      .rows[0] as Record<string, unknown>;
    assert.equal(message.role, 'user');
    assert.equal(message.runId, turn.runId);

    // The answer waits a moment for the start: when it came in time it names the execution.
    const description = await waitFor(() =>
      temporal.client.workflow
        .getHandle(turn.chatId ?? '')
        .describe()
        .catch(() => undefined),
    );
    if (turn.triggerRunId !== null) assert.equal(description.runId, turn.triggerRunId);
    assert.equal(description.type, 'agentRunWorkflow');
    assert.deepEqual(await description.memo, { runId: turn.runId, metadata: {} });
  });

  it('gives exactly one 202 and 19 RUN_ACTIVE for 20 parallel sends to one chat over two gateways, writing one turn', async () => {
    const first = (await (await send({ text: 'start' })).json()) as { chatId: string };
    const { db } = await testStack();
    // Close the first run so the chat is free, then race 20 sends into it.
    await db.pool.query(`UPDATE "Run" SET status = 'COMPLETE' WHERE "chatId" = $1`, [first.chatId]);
    await (
      await testStack()
    ).temporal.client.workflow
      .getHandle(first.chatId)
      .terminate('test: free the chat');
    const before = await counts(user.userId);

    // Half the sends go through a second gateway with its own connection pool, as a second
    // process would: only the database can arbitrate between them.
    const stack = await testStack();
    const db2 = createDatabase({ url: stack.databaseUrl, poolSize: 10 });
    const second = await startGateway({ config: gateway.deps.config, deps: { db: db2 } });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${i % 2 ? second.url : gateway.url}/api/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.bearer },
          body: JSON.stringify({ text: `parallel ${i}`, chatId: first.chatId }),
        }),
      ),
    );
    await second.close();
    await db2.close();
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [202, ...Array<number>(19).fill(409)]);
    const winner = (await results.find((x) => x.status === 202)?.json()) as { runId: string };
    const base = `/api/v1/chats/${first.chatId}/runs/${winner.runId}`;
    for (const r of results.filter((x) => x.status === 409)) {
      // Each refusal names the run that won, whichever gateway admitted it.
      assert.deepEqual(await r.json(), {
        error: 'A run of this chat is still active.',
        code: 'RUN_ACTIVE',
        activeRun: {
          id: winner.runId,
          chatId: first.chatId,
          status: 'QUEUED',
          waitpoint: null,
          links: { poll: base, stream: `${base}/events`, cancel: `${base}/cancel`, decide: null },
        },
      });
    }
    assert.deepEqual(await counts(user.userId), {
      chats: before.chats,
      messages: before.messages + 1,
      runs: before.runs + 1,
    });
  });

  it("admits a send that meets its chat's previous run ending, rather than refusing it", async () => {
    const first = (await (await send({ text: 'start' })).json()) as { chatId: string; runId: string };
    const { db } = await testStack();
    const ending = await db.pool.connect();
    try {
      // The previous run's ending, as finishRun writes it: its chat's row first (the queue's lock,
      // taken as an admission takes it), then the run row.
      await ending.query('BEGIN');
      await ending.query(`SELECT 1 FROM "Chat" WHERE id = $1 FOR NO KEY UPDATE`, [first.chatId]);
      await ending.query(`UPDATE "Run" SET status = 'COMPLETE', "finishedAt" = now() WHERE id = $1`, [
        first.runId,
      ]);
      const next = fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.bearer },
        body: JSON.stringify({ text: 'next', chatId: first.chatId }),
      });
      // The send waits on the chat's lock, and reads the chat's runs once the ending has committed.
      await waitFor(async () => {
        const { rows } = await db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%user_run_place_free%'`,
        );
        return rows.length ? true : undefined;
      });
      await ending.query('COMMIT');
      const res = await next;
      const body = (await res.json()) as { chatId: string; runId: string };
      assert.equal(res.status, 202, JSON.stringify(body));
      assert.equal(body.chatId, first.chatId);
      assert.notEqual(body.runId, first.runId);
    } finally {
      await ending.query('ROLLBACK').catch(() => undefined);
      ending.release();
    }
  });

  it('names the waiting run and its open plan in RUN_ACTIVE, with links that answer', async () => {
    const turn = (await (await send({ text: 'plan something', planMode: true })).json()) as {
      chatId: string;
      runId: string;
    };
    const { db } = await testStack();
    // No worker takes this queue: the plan is put to the approver by hand, as the agent would.
    const waitpointId = randomUUID();
    await db.pool.query(`UPDATE "Run" SET status = 'WAITING' WHERE id = $1`, [turn.runId]);
    await db.pool.query(
      `INSERT INTO "Waitpoint" (id, "runId", type, status, plan, "expiresAt")
       VALUES ($1, $2, 'PLAN_APPROVAL', 'PENDING', $3, now() + interval '1 hour')`,
      [waitpointId, turn.runId, JSON.stringify({ summary: 'crop it', steps: [] })],
    );
    const res = await send({ text: 'another', chatId: turn.chatId });
    assert.equal(res.status, 409);
    const { activeRun } = (await res.json()) as {
      activeRun: {
        id: string;
        status: string;
        waitpoint: { id: string; status: string; plan: unknown };
        links: Record<string, string>;
      };
    };
    assert.equal(activeRun.id, turn.runId);
    assert.equal(activeRun.status, 'WAITING');
    assert.equal(activeRun.waitpoint.id, waitpointId);
    assert.equal(activeRun.waitpoint.status, 'PENDING');
    assert.deepEqual(activeRun.waitpoint.plan, { summary: 'crop it', steps: [] });
    assert.equal(
      activeRun.links.decide,
      `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waitpointId}/complete`,
    );
    const poll = await fetch(`${gateway.url}${activeRun.links.poll}`, { headers: user.bearer });
    assert.equal(poll.status, 200);
    assert.equal(((await poll.json()) as { id: string }).id, turn.runId);
    await db.pool.query(`UPDATE "Run" SET status = 'CANCELLED' WHERE id = $1`, [turn.runId]);
  });

  it('refuses bad input with a clear 4xx and writes nothing', async () => {
    const other = await createTestUser();
    const otherChat = (await (
      await fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...other.bearer },
        body: JSON.stringify({ text: 'theirs' }),
      })
    ).json()) as { chatId: string };
    const before = await counts(user.userId);
    const cases: [unknown, number, string][] = [
      [{ text: 'x'.repeat(8193) }, 400, 'INVALID_REQUEST'],
      [{ text: '' }, 400, 'INVALID_REQUEST'],
      [{}, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', chatId: 'not-a-uuid' }, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', image_urls: Array(9).fill('https://example.com/a.png') }, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', image_urls: ['ftp://example.com/a.png'] }, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', image_urls: [`https://example.com/${'a'.repeat(2048)}.png`] }, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', planMode: 'yes' }, 400, 'INVALID_REQUEST'],
      [{ text: 'hi', chatId: otherChat.chatId }, 404, 'CHAT_NOT_FOUND'],
      [{ text: 'hi', chatId: randomUUID() }, 404, 'CHAT_NOT_FOUND'],
      [{ text: 'hi', attachmentIds: [randomUUID()] }, 404, 'ATTACHMENT_NOT_FOUND'],
    ];
    for (const [body, status, code] of cases) {
      const res = await send(body);
      assert.equal(res.status, status, JSON.stringify(body).slice(0, 80));
      assert.equal(((await res.json()) as { code: string }).code, code);
    }
    assert.deepEqual(await counts(user.userId), before);
  });

  it('answers 401 without a valid key', async () => {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer svck_live_nope' },
      body: JSON.stringify({ text: 'hi' }),
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { code: string }).code, 'UNAUTHORIZED');
  });

  /**
   * A gateway whose way to Temporal is cut, and a turn sent through it: admitted (202) with no
   * workflow started yet. The caller closes the gateway, then the proxy.
   */
  async function sendWhileTemporalAway(text: string, deps: Partial<TestGateway['deps']> = {}) {
    const stack = await testStack();
    const proxy = await startTcpProxy(stack.temporalAddress);
    const cut = await startGateway({
      config: stack.config({ TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}` }),
      temporalAddress: proxy.address,
      deps,
    });
    try {
      await proxy.down();
      const turn = await queued(cut.url, { text });
      assert.equal(turn.triggerRunId, null, 'the start is still retrying');
      return { stack, proxy, cut, turn };
    } catch (err) {
      await cut.close();
      await proxy.close();
      throw err;
    }
  }

  it('accepts a turn while Temporal is unreachable and dispatches it once Temporal is back', async () => {
    const { stack, proxy, cut, turn } = await sendWhileTemporalAway('while Temporal is away');
    try {
      await proxy.up();
      const dispatcher = startDispatcher(cut.deps, 200);
      try {
        const description = await waitFor(
          () =>
            stack.temporal.client.workflow
              .getHandle(turn.chatId)
              .describe()
              .catch(() => undefined),
          { what: 'the dispatcher to start the run', timeoutMs: 20_000 },
        );
        assert.equal(description.status.name, 'RUNNING');
        assert.deepEqual(await description.memo, { runId: turn.runId, metadata: {} });
      } finally {
        await dispatcher.stop();
      }
    } finally {
      await cut.close();
      await proxy.close();
    }
  });

  /** What the gateways of this process answered about their sends' starts, by outcome. */
  const startWaits = async () => {
    const text = await metrics.metrics();
    const of = (outcome: string) => sampleSum(text, 'agent_send_start_waits_total', { outcome });
    return { started: of('started'), timedOut: of('timed_out'), skipped: of('skipped') };
  };
  // A gateway of its own, so its pace of starts is the test's alone; no worker takes its runs.
  const pacedGateway = (temporalAddress?: string) =>
    testStack().then((stack) =>
      startGateway({
        config: stack.config({
          TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}`,
          MAX_ACTIVE_RUNS_PER_USER: '1000',
          SEND_RATE_LIMIT_PER_MINUTE: '100000',
        }),
        ...(temporalAddress ? { temporalAddress } : {}),
      }),
    );
  const sendTo = async (url: string, body: { text: string; chatId?: string }) =>
    (await queued(url, body)).triggerRunId;

  /** A plain text turn admitted through the operation itself, as a send admits it. */
  const admitPlain = (deps: TestGateway['deps'], text: string, chatId?: string) =>
    admitTurn(deps, {
      userId: user.userId,
      via: 'rest',
      ...(chatId ? { chatId } : {}),
      text,
      imageUrls: [],
      attachmentIds: [],
      planMode: false,
    });
  /**
   * Starts the admitted run's execution and ends the run (its first step took it, as gateStep
   * does) while the execution has its last workflow task to come: what a client chaining turns
   * finds. Answers the execution.
   */
  const endWithExecutionOpen = async (deps: TestGateway['deps'], admitted: AdmittedTurn) => {
    const execution = await startRun(deps, admitted.run, 'admission');
    assert.ok(execution);
    const { db } = await testStack();
    await db.pool.query(
      `UPDATE "Run" SET status = 'COMPLETE', "triggerRunId" = $2, "finishedAt" = now() WHERE id = $1`,
      [admitted.run.runId, execution],
    );
    return execution;
  };

  it('stops waiting for starts while Temporal answers none in time, and waits again once it does', async () => {
    const stack = await testStack();
    const proxy = await startTcpProxy(stack.temporalAddress);
    const cut = await pacedGateway(proxy.address);
    const sendOne = () => sendTo(cut.url, { text: 'how fast is Temporal starting?' });
    try {
      await proxy.down();
      const before = await startWaits();
      for (let i = 0; i < 6; i++) assert.equal(await sendOne(), null);
      const away = await startWaits();
      // Four sends waited in vain; from then on the gateway had the evidence and answered at once.
      assert.deepEqual(
        { timedOut: away.timedOut - before.timedOut, skipped: away.skipped - before.skipped },
        { timedOut: 4, skipped: 2 },
      );
      await proxy.up();
      // Each send's start is still timed against the wait, so the quick starts of a Temporal that
      // is back bring the wait back, and with it the id in the answer.
      // (The gateway's connection takes a moment to come back, as in the dispatch test above.)
      await waitFor(async () => (await sendOne()) ?? undefined, {
        what: 'an answer carrying triggerRunId after Temporal came back',
        timeoutMs: 20_000,
      });
      assert.ok((await startWaits()).started > away.started);
    } finally {
      await cut.close();
      await proxy.close();
    }
  });

  it('paces sends into chats whose previous execution is still closing apart from sends into other chats', async () => {
    const { temporal } = await testStack();
    const paced = await pacedGateway();
    const open: { chatId: string; execution: string }[] = [];
    try {
      // Five chats whose run has just ended while its execution has not closed (no worker takes
      // it), as a client chaining turns finds them: a start into one waits for that execution,
      // well past the send's wait. Set up beside the gateway's sends, so its pace has heard of no
      // start yet.
      for (let i = 0; i < 5; i++) {
        const previous = await admitPlain(paced.deps, 'the previous turn');
        open.push({
          chatId: previous.run.chatId,
          execution: await endWithExecutionOpen(paced.deps, previous),
        });
      }
      const chats = open.map((o) => o.chatId);
      const before = await startWaits();
      for (const chatId of chats.slice(0, 4))
        assert.equal(await sendTo(paced.url, { text: 'next', chatId }), null);
      assert.equal(await sendTo(paced.url, { text: 'next', chatId: chats[4] }), null);
      const chained = await startWaits();
      assert.deepEqual(
        { timedOut: chained.timedOut - before.timedOut, skipped: chained.skipped - before.skipped },
        { timedOut: 4, skipped: 1 },
        'four chained sends waited in vain, and the fifth did not wait',
      );
      // A send into a new chat has its own evidence, none yet: it waits.
      await sendTo(paced.url, { text: 'a new chat' });
      const fresh = await startWaits();
      assert.equal(fresh.skipped, chained.skipped, 'the send into a new chat waited for its start');
      assert.equal(fresh.started + fresh.timedOut, chained.started + chained.timedOut + 1);
    } finally {
      // Closed, the executions let the chained sends' starts through, and no dispatcher of a later
      // test waits on them.
      await Promise.all(
        open.map((o) => temporal.client.workflow.getHandle(o.chatId, o.execution).terminate('test over')),
      );
      await paced.close();
    }
  });

  it('stops with a send still starting its workflow: the start ends before the Temporal connection closes', async () => {
    const log = memoryStream();
    const { proxy, cut } = await sendWhileTemporalAway('sent just before a stop', {
      logger: createLogger({ level: 'warn', name: 'gateway-stop-test' }, log.stream),
    });
    await cut.close();
    await proxy.close();
    // The stop waited for the start to give up (its deadline), leaving the run to a dispatcher:
    // closing the connection under its pending retry would have thrown from the retry's timer.
    assert.match(log.text(), /run not started yet/);
  });

  const storedFiles = async (): Promise<string[]> =>
    (await readdir(storageDir, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => e.name);

  it('accepts multipart with files, planMode and chatId as form fields, storing the files as attachments', async () => {
    const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: '#f00' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set('text', 'crop this to the left half');
    form.set('planMode', 'true');
    form.append('file', new Blob([png]), 'red.png');
    form.append('files', new Blob([png]), 'again.png');
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: user.bearer,
      body: form,
    });
    assert.equal(res.status, 202, await res.clone().text());
    const turn = (await res.json()) as { runId: string; messageId: string; chatId: string };
    const { db } = await testStack();
    const run = (await db.pool.query(`SELECT "planMode" FROM "Run" WHERE id = $1`, [turn.runId])).rows[0];
    assert.equal(run?.planMode, true);
    const attachments = (
      await db.pool.query(
        `SELECT filename, "mimeType", "chatId", "messageId" FROM "Attachment" WHERE "messageId" = $1 ORDER BY filename`,
        [turn.messageId],
      )
    ).rows;
    assert.deepEqual(
      attachments.map((a) => [a.filename, a.mimeType, a.chatId]),
      [
        ['again.png', 'image/png', turn.chatId],
        ['red.png', 'image/png', turn.chatId],
      ],
    );
    const message = (
      await db.pool.query(`SELECT "contentBlocks" FROM "Message" WHERE id = $1`, [turn.messageId])
    ).rows[0];
    const blocks = message?.contentBlocks as { type: string; url?: string }[];
    assert.deepEqual(
      blocks.map((b) => b.type),
      ['text', 'image', 'image'],
    );
    // The URL names PUBLIC_BASE_URL; this test's gateway listens on another port.
    const url = new URL(blocks[1]?.url ?? '');
    const image = await fetch(`${gateway.url}${url.pathname}${url.search}`);
    assert.equal(image.status, 200);
    assert.deepEqual(Buffer.from(await image.arrayBuffer()), png);
  });

  it('leaves no attachment, object or message behind when a multipart send is refused', async () => {
    const first = (await (await send({ text: 'busy chat' })).json()) as { chatId: string };
    const before = await counts(user.userId);
    const filesBefore = await storedFiles();
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#00f' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set('text', 'second');
    form.set('chatId', first.chatId);
    form.append('file', new Blob([png]), 'blue.png');
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: user.bearer,
      body: form,
    });
    assert.equal(res.status, 409);
    assert.deepEqual(await counts(user.userId), before);
    assert.deepEqual(await storedFiles(), filesBefore);
    const { db } = await testStack();
    const orphans = await db.pool.query(
      `SELECT 1 FROM "Attachment" WHERE "userId" = $1 AND "messageId" IS NULL`,
      [user.userId],
    );
    assert.equal(orphans.rowCount, 0);

    const text = new FormData();
    text.set('text', 'a text file named .png');
    text.append('file', new Blob(['not an image at all']), 'fake.png');
    const refused = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: user.bearer,
      body: text,
    });
    assert.equal(refused.status, 415);
    assert.deepEqual(await counts(user.userId), before);
  });

  it('limits sends per user with 429 RATE_LIMITED and Retry-After, writing nothing over the limit', async () => {
    const results: Response[] = [];
    for (let i = 0; i < 26; i++) results.push(await send({ text: `flood ${i}` }));
    const limited = results.filter((r) => r.status === 429);
    assert.equal(limited.length, 1);
    const last = limited[0];
    assert.equal(((await last?.json()) as { code: string }).code, 'RATE_LIMITED');
    assert.match(last?.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal(last?.headers.get('ratelimit-limit'), '25');
    assert.equal((await counts(user.userId)).runs, 25);
  });

  it('recovers a turn committed without a start (a gateway died in between), starting it exactly once', async () => {
    // The commit happens; the start never does, as if the process died right after COMMIT.
    const admitted = await admitPlain(gateway.deps, 'orphaned turn');
    const { db, temporal } = await testStack();
    const dispatchers = [startDispatcher(gateway.deps, 100), startDispatcher(gateway.deps, 100)];
    try {
      const started = await waitFor(
        () =>
          temporal.client.workflow
            .getHandle(admitted.run.chatId)
            .describe()
            .catch(() => undefined),
        { what: 'the dispatcher to start the orphaned run', timeoutMs: 45_000 },
      );
      // Both dispatchers have looked at the run since, and recorded that its execution exists.
      await waitFor(
        async () =>
          (
            await db.pool.query(`SELECT 1 FROM "Run" WHERE id = $1 AND "checkedAt" IS NOT NULL`, [
              admitted.run.runId,
            ])
          ).rowCount || undefined,
        { what: 'the dispatchers to see the run started' },
      );
      const executions = [];
      for await (const e of temporal.client.workflow.list({ query: `WorkflowId = '${admitted.run.chatId}'` }))
        executions.push(e);
      assert.deepEqual(
        executions.map((e) => e.runId),
        [started.runId],
        'two dispatchers started it once',
      );
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
  });

  it('attaches a retried start to the execution an earlier start created, and waits while a previous run closes', async () => {
    const admitted = await admitPlain(gateway.deps, 'started twice');
    const first = await startRun(gateway.deps, admitted.run, 'admission');
    assert.ok(first);
    const { db } = await testStack();
    assert.equal(
      await startRun(gateway.deps, admitted.run, 'dispatcher'),
      first,
      "the dispatcher's retry attaches to its own execution",
    );

    // The chat's workflow still runs for this run; a later run of the chat must not attach to it.
    await db.pool.query(`UPDATE "Run" SET status = 'COMPLETE' WHERE id = $1`, [admitted.run.runId]);
    const next = await admitPlain(gateway.deps, 'next turn', admitted.run.chatId);
    for (const by of ['admission', 'dispatcher'] as const)
      assert.equal(
        await startRun(gateway.deps, next.run, by),
        null,
        `left for the dispatcher while the previous run closes (${by})`,
      );
  });

  it('starts a turn sent as the previous run ends once that execution has closed, without a start refused first', async () => {
    const { temporal } = await testStack();
    const previous = await admitPlain(gateway.deps, 'chained');
    assert.equal(previous.closingExecution, null, 'a new chat has no previous run');
    const execution = await endWithExecutionOpen(gateway.deps, previous);
    const next = await admitPlain(gateway.deps, 'chained', previous.run.chatId);
    assert.equal(next.closingExecution, execution, 'the admission names the execution still closing');

    // What the start does with Temporal, in order: each start, and each wait on an execution.
    const calls: string[] = [];
    const { client } = gateway.deps.temporal;
    const workflow = new Proxy(client.workflow, {
      get(target, key) {
        if (key === 'start')
          return (...args: Parameters<typeof target.start>) => {
            calls.push('start');
            return target.start(...args);
          };
        if (key === 'getHandle')
          return (...args: Parameters<typeof target.getHandle>) => {
            calls.push(`wait on ${args[1] ?? 'the latest'}`);
            return target.getHandle(...args);
          };
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const deps = {
      ...gateway.deps,
      temporal: {
        ...gateway.deps.temporal,
        client: Object.create(client, { workflow: { value: workflow } }),
      },
    };
    const started = startRun(deps, next.run, 'admission', next.closingExecution);
    await waitFor(async () => (calls.length ? true : undefined), { what: 'the start to reach Temporal' });
    await temporal.client.workflow.getHandle(previous.run.chatId, execution).terminate('closing');
    const nextExecution = await started;
    assert.ok(nextExecution && nextExecution !== execution, 'the next run started on its own execution');
    assert.deepEqual(
      calls,
      [`wait on ${execution}`, 'start'],
      'one start, after the wait, not a refused one first',
    );
  });
});
