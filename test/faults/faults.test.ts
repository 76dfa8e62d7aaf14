import assert from 'node:assert/strict';
import { createTemporalClient } from '../../core/temporal/connection';
import { toolCallWorkflowId } from '../../workflows/tool-call.contract';
import { waitFor } from '../support/wait';
import {
  appEnv,
  readiness,
  send,
  signUp,
  startGateway,
  startImageServer,
  startInfra,
  startReceiver,
  startWorker,
  subscribe,
  type Account,
  type AppProcess,
  type Gateway,
  type Infra,
} from './support';

const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];

describe('faults (real processes)', function () {
  this.timeout(600_000);
  let infra: Infra;
  const processes: { kill(): Promise<void> }[] = [];
  const track = <T extends { kill(): Promise<void> }>(p: T): T => {
    processes.push(p);
    return p;
  };

  before(async () => {
    infra = await startInfra();
  });
  afterEach(async () => {
    for (const p of processes.splice(0)) await p.kill();
  });
  after(async () => {
    // Also what a failed before-hook started, which no afterEach saw.
    for (const p of processes.splice(0)) await p.kill();
    await infra?.close();
  });

  const runStatuses = async (runIds: string[]) => {
    const { rows } = await infra.pool.query<{ id: string; status: string }>(
      `SELECT id, status FROM "Run" WHERE id = ANY($1::uuid[])`,
      [runIds],
    );
    return rows;
  };
  const allTerminal = (runIds: string[]) => async () => {
    const rows = await runStatuses(runIds);
    return rows.length === runIds.length && rows.every((r) => TERMINAL.includes(r.status)) ? rows : undefined;
  };

  it('loses and doubles nothing while the worker is SIGKILLed six times under 50 turns, each kill aimed at work in flight', async () => {
    // A paced model (a reply streams for about a second) keeps turns in flight across the kills.
    const env = appEnv(infra, { PLAN_APPROVAL_TIMEOUT: '10m', LOCAL_MODEL_PACE: '150ms' });
    const gateway = await startGateway(env);
    track(gateway.process);
    let worker: AppProcess = track(await startWorker(env));
    const account = await signUp(gateway.url);
    // While a kill is aimed at a POST, the receiver holds the first one it gets open until the kill.
    let holding: { arrived(): void; released: Promise<void> } | undefined;
    const receiver = await startReceiver({
      beforeAnswer: async () => {
        const hold = holding;
        holding = undefined;
        if (!hold) return;
        hold.arrived();
        await hold.released;
      },
    });
    await subscribe(gateway.url, account, receiver.url);
    const image = await startImageServer({ width: 64, height: 48, background: '#3a7' });
    try {
      // 50 turns: 30 plain, 10 with a crop, 10 in plan mode (a crop that waits for approval).
      const turns: { runId: string; chatId: string; kind: 'text' | 'tool' | 'plan' }[] = [];
      for (let i = 0; i < 50; i++) {
        const kind = i % 5 === 0 || i % 5 === 3 ? (i % 10 === 0 || i % 10 === 3 ? 'plan' : 'tool') : 'text';
        const body =
          kind === 'text'
            ? { text: `hello number ${i}` }
            : { text: 'crop this to the left half', image_urls: [image.url], planMode: kind === 'plan' };
        const res = await send(gateway.url, account, body);
        assert.equal(res.status, 202, JSON.stringify(res));
        turns.push({ runId: res.runId as string, chatId: res.chatId as string, kind });
      }
      const runIds = turns.map((t) => t.runId);

      // Approve plans as they appear, while the worker keeps dying.
      let approving = true;
      const approvals = (async () => {
        const approved = new Set<string>();
        while (approving) {
          const { rows } = await infra.pool.query<{ id: string; runId: string; chatId: string }>(
            `SELECT w.id, w."runId", r."chatId" FROM "Waitpoint" w JOIN "Run" r ON r.id = w."runId"
              WHERE w.status = 'PENDING' AND w."runId" = ANY($1::uuid[])`,
            [runIds],
          );
          for (const w of rows.filter((r) => !approved.has(r.id))) {
            const res = await fetch(
              `${gateway.url}/api/v1/chats/${w.chatId}/runs/${w.runId}/waitpoints/${w.id}/complete`,
              {
                method: 'POST',
                headers: { ...account.bearer, 'content-type': 'application/json' },
                body: JSON.stringify({ approved: true }),
              },
            );
            await res.arrayBuffer();
            if (res.status === 202) approved.add(w.id);
          }
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        return approved.size;
      })();

      // Each kill waits for the work it means to interrupt, in turn: a crop running, a model step
      // streaming (its text partly written), a POST the receiver holds open.
      const rowIn = (sql: string) => async () =>
        (await infra.pool.query(sql, [runIds])).rowCount ? true : undefined;
      const aims: { what: string; ready(): Promise<() => void> }[] = [
        {
          what: 'a crop running',
          ready: async () => {
            await waitFor(
              rowIn(`SELECT 1 FROM "ToolCall" WHERE "runId" = ANY($1::uuid[]) AND status = 'RUNNING'`),
              {
                timeoutMs: 60_000,
                intervalMs: 10,
                what: 'a crop running',
              },
            );
            return () => undefined;
          },
        },
        {
          what: 'a model step streaming',
          ready: async () => {
            await waitFor(
              rowIn(`SELECT 1 FROM "Run" WHERE id = ANY($1::uuid[]) AND status = 'RUNNING' AND text <> ''`),
              { timeoutMs: 60_000, intervalMs: 10, what: 'a model step streaming' },
            );
            return () => undefined;
          },
        },
        {
          what: 'a POST open at the receiver',
          ready: async () => {
            let release!: () => void;
            const released = new Promise<void>((resolve) => (release = resolve));
            const arrived = new Promise<void>((resolve) => (holding = { arrived: resolve, released }));
            await Promise.race([
              arrived,
              new Promise((_, reject) =>
                setTimeout(() => reject(new Error('no POST reached the receiver in 60 s')), 60_000).unref(),
              ),
            ]);
            return release;
          },
        },
      ];
      const struck: string[] = [];
      for (let round = 0; round < 6; round++) {
        const aim = aims[round % aims.length] as (typeof aims)[number];
        const letGo = await aim.ready();
        await worker.kill('SIGKILL');
        letGo();
        struck.push(aim.what);
        worker = track(await startWorker(env));
      }
      const kills = struck.length;
      const finished = await waitFor(allTerminal(runIds), {
        timeoutMs: 240_000,
        intervalMs: 500,
        what: 'every run to end',
      });
      approving = false;
      const approved = await approvals;

      const byStatus = new Map<string, number>();
      for (const r of finished) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      console.log(
        `      runs: ${runIds.length}, worker kills: ${kills} (${struck.join(', ')}), plans approved: ${approved}, end states: ${JSON.stringify(Object.fromEntries(byStatus))}`,
      );
      assert.deepEqual(Object.fromEntries(byStatus), { COMPLETE: 50 });

      const doubled = await infra.pool.query(
        `SELECT m."runId", count(*) FROM "Message" m
          WHERE m."runId" = ANY($1::uuid[]) GROUP BY m."runId", m.role HAVING count(*) > 1`,
        [runIds],
      );
      assert.deepEqual(doubled.rows, [], 'one user and one assistant message per run');
      const calls = await infra.pool.query<{ runId: string; n: number }>(
        `SELECT "runId", count(*)::int AS n FROM "ToolCall" WHERE "runId" = ANY($1::uuid[]) GROUP BY "runId"`,
        [runIds],
      );
      const toolRuns = turns.filter((t) => t.kind !== 'text').map((t) => t.runId);
      assert.deepEqual(
        calls.rows.map((c) => c.runId).sort(),
        [...toolRuns].sort(),
        'a tool call for each tool turn, none for a text turn',
      );
      assert.ok(
        calls.rows.every((c) => c.n === 1),
        'exactly one tool call per tool turn',
      );
      const charges = await infra.pool.query<{ n: number; calls: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT l."toolCallId")::int AS calls
           FROM "CreditLedgerEntry" l JOIN "ToolCall" t ON t.id = l."toolCallId" WHERE t."runId" = ANY($1::uuid[])`,
        [runIds],
      );
      assert.equal(charges.rows[0]?.n, toolRuns.length, 'one charge per tool call');
      assert.equal(charges.rows[0]?.calls, toolRuns.length);

      // Every event once in the database (agent.started and agent.completed per run, tool.completed
      // per tool call), and every delivery posted.
      const toolCallIds = (
        await infra.pool.query<{ id: string }>(`SELECT id FROM "ToolCall" WHERE "runId" = ANY($1::uuid[])`, [
          runIds,
        ])
      ).rows.map((r) => r.id);
      const deliveries = await waitFor(
        async () => {
          const { rows } = await infra.pool.query<{ id: string; status: string }>(
            `SELECT id, status FROM "WebhookDelivery" WHERE "idempotencyKey" = ANY($1::text[])`,
            [[...runIds, ...toolCallIds]],
          );
          // An emit cut short by a kill is retried once its start-to-close timeout has passed.
          return rows.length === runIds.length * 2 + toolCallIds.length &&
            rows.every((r) => r.status === 'DELIVERED')
            ? rows
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500, what: 'every delivery to be delivered' },
      );
      const events = await infra.pool.query<{ n: number; distinct: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT ("endpointId", event, "idempotencyKey"))::int AS distinct
           FROM "WebhookDelivery"`,
      );
      assert.equal(events.rows[0]?.n, events.rows[0]?.distinct, 'one delivery per endpoint, event and run');
      assert.equal(deliveries.length, runIds.length * 2 + toolCallIds.length, 'each event once');
      const posted = new Map<string, number>();
      for (const r of receiver.received) posted.set(r.deliveryId, (posted.get(r.deliveryId) ?? 0) + 1);
      const repeated = [...posted.values()].filter((n) => n > 1).length;
      console.log(
        `      deliveries: ${events.rows[0]?.n} rows, ${receiver.received.length} posts received, ${posted.size} distinct, ${repeated} posted again after a kill`,
      );
      for (const d of deliveries) assert.ok(posted.has(d.id), `delivery ${d.id} reached the receiver`);
    } finally {
      await receiver.close();
      await image.close();
    }
  });

  it('starts a run exactly once when the gateway dies between the commit and the workflow start', async () => {
    const env = appEnv(infra);
    const worker = track(await startWorker(env));
    const paused = await startGateway({ ...env, FAULT_PAUSE_AT: 'admission' });
    track(paused.process);
    const account = await signUp(paused.url);
    const sending = send(paused.url, account, { text: 'hello after a crash' }).catch(() => undefined);
    await paused.process.waitForLine(/fault point reached: admission/);
    await paused.process.kill('SIGKILL');
    assert.equal(await sending, undefined, 'the client saw the connection drop');

    const { rows } = await infra.pool.query<{
      id: string;
      chatId: string;
      status: string;
      triggerRunId: string;
    }>(`SELECT id, "chatId", status, "triggerRunId" FROM "Run" ORDER BY "createdAt" DESC LIMIT 1`);
    const run = rows[0];
    assert.ok(run);
    assert.equal(run.status, 'QUEUED');
    assert.equal(run.triggerRunId, null, 'committed, never started');

    const gateway = track((await startGateway(env)).process);
    const done = await waitFor(allTerminal([run.id]), { timeoutMs: 60_000, what: 'the orphaned run to end' });
    assert.equal(done[0]?.status, 'COMPLETE');
    const executions = await countExecutions(infra, env, run.chatId);
    console.log(`      orphaned run started by the dispatcher; executions of its chat: ${executions}`);
    assert.equal(executions, 1);
    const messages = await infra.pool.query<{ role: string }>(
      `SELECT role FROM "Message" WHERE "runId" = $1`,
      [run.id],
    );
    assert.deepEqual(
      messages.rows.map((m) => m.role).sort(),
      ['assistant', 'user'],
      'one turn, answered once',
    );
    await gateway.kill();
    await worker.kill();
  });

  it('starts a queued turn exactly once when the worker dies between the ending that promoted it and the continue-as-new', async () => {
    const env = appEnv(infra);
    // The worker holds the head's model step (while the next turn is queued behind it), then holds
    // again once the head's ending is recorded, and is killed there.
    const doomed = track(
      await startWorker({ ...env, FAULT_PAUSE_AT: 'model-step,run-finished', FAULT_PAUSE_FOR: '4s' }),
    );
    const gateway = await startGateway(env);
    track(gateway.process);
    const account = await signUp(gateway.url);
    const head = await send(gateway.url, account, { text: 'the head turn' });
    assert.equal(head.status, 202, JSON.stringify(head));
    await doomed.waitForLine(/fault point reached: model-step/);
    const queued = await send(gateway.url, account, {
      text: 'the queued turn',
      chatId: head.chatId,
      onActiveRun: 'enqueue',
      metadata: { ticket: 'queued-after-kill' },
    });
    assert.equal(queued.status, 202, JSON.stringify(queued));
    await doomed.waitForLine(/fault point reached: run-finished/);
    await doomed.kill('SIGKILL');

    const { rows: promoted } = await infra.pool.query<{ status: string; queueSeq: string | null }>(
      `SELECT status, "queueSeq" FROM "Run" WHERE id = $1`,
      [queued.runId],
    );
    assert.deepEqual(
      promoted[0],
      { status: 'QUEUED', queueSeq: null },
      'promoted by the ending, not started',
    );

    // Another worker takes the head's workflow task over: its step finds the run ended and the
    // execution continues as new into the promoted turn.
    track(await startWorker(env));
    const done = await waitFor(allTerminal([head.runId as string, queued.runId as string]), {
      timeoutMs: 90_000,
      what: 'both turns to end',
    });
    assert.deepEqual(done.map((r) => r.status).sort(), ['COMPLETE', 'COMPLETE']);
    const { rows: answers } = await infra.pool.query<{ runId: string; role: string }>(
      `SELECT "runId", role FROM "Message" WHERE "chatId" = $1 ORDER BY "createdAt", id`,
      [head.chatId],
    );
    assert.deepEqual(
      answers.map((m) => [m.runId === head.runId ? 'head' : 'queued', m.role]),
      [
        ['head', 'user'],
        ['head', 'assistant'],
        ['queued', 'user'],
        ['queued', 'assistant'],
      ],
      'each turn once, answered once, in order',
    );
    const { rows: endings } = await infra.pool.query<{ runId: string; n: number }>(
      `SELECT "runId", count(*)::int AS n FROM "RunEvent"
        WHERE "runId" = ANY($1::uuid[]) AND type = 'status' AND data->>'status' = 'COMPLETE' GROUP BY "runId"`,
      [[head.runId, queued.runId]],
    );
    assert.deepEqual(
      endings.map((e) => e.n),
      [1, 1],
      'one ending event each',
    );
    // The chat's workflow: the head's execution, continued as new into the queued turn's, which an
    // operator finds by its run id and its metadata.
    const executions = await waitFor(
      async () => {
        const n = await countExecutions(infra, env, head.chatId as string);
        return n >= 2 ? n : undefined;
      },
      { what: 'both executions listed' },
    );
    assert.equal(executions, 2);
    const found = await waitFor(
      async () => {
        const n = await countExecutions(
          infra,
          env,
          head.chatId as string,
          `AgentRunId = '${queued.runId}' AND AgentRunMetadata = 'ticket=queued-after-kill'`,
        );
        return n > 0 ? n : undefined;
      },
      { what: 'the queued turn’s execution found by its search attributes' },
    );
    assert.equal(found, 1);
  });

  it('answers a crop whose worker dies right after recording it, and charges it once', async () => {
    const env = appEnv(infra);
    // The worker holds each call just after its success is recorded, and is killed there.
    const doomed = track(await startWorker({ ...env, FAULT_PAUSE_AT: 'tool-recorded' }));
    const gateway = await startGateway(env);
    track(gateway.process);
    const account = await signUp(gateway.url);
    const image = await startImageServer({ width: 40, height: 30, background: '#37a' });
    try {
      // Answered while the worker still holds the call: from its recorded row, not its workflow.
      const res = await fetch(`${gateway.url}/api/v1/tools/crop_image`, {
        method: 'POST',
        headers: { ...account.bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ image_url: image.url, x: 0, y: 0, width: 20, height: 10 }),
      });
      assert.equal(res.status, 200);
      const result = (await res.json()) as { providerRunId: string; creditCost: string };
      await doomed.waitForLine(/fault point reached: tool-recorded/);
      await doomed.kill('SIGKILL');

      // Another worker takes the call's workflow over once its task times out, and finds it done.
      const worker = track(await startWorker(env));
      const call = async () => {
        const { rows } = await infra.pool.query<{ id: string; status: string; charges: number }>(
          `SELECT t.id, t.status, (SELECT count(*)::int FROM "CreditLedgerEntry" l WHERE l."toolCallId" = t.id) AS charges
             FROM "ToolCall" t WHERE t."providerRunId" = $1`,
          [result.providerRunId],
        );
        assert.ok(rows[0]);
        return rows[0];
      };
      const { client, connection } = createTemporalClient({
        address: infra.temporalAddress,
        namespace: 'default',
      });
      try {
        const ended = await client.workflow.getHandle(toolCallWorkflowId((await call()).id)).result();
        assert.deepEqual(ended, result, 'the workflow ends with the answer given');
      } finally {
        await connection.close();
      }
      // Read once the takeover has run the call again: it found the success, and charged nothing more.
      const { status, charges } = await call();
      assert.deepEqual({ status, charges }, { status: 'SUCCEEDED', charges: 1 }, 'recorded and charged once');
      await worker.kill();
    } finally {
      await image.close();
    }
  });

  it('answers a crop whose worker freezes mid-crop (SIGSTOP) from another worker, and charges it once', async () => {
    // A window long enough for a takeover, short enough that a call left to fail answers within it.
    const env = appEnv(infra, { TOOL_ROUTE_TIMEOUT: '2m' });
    const frozen = track(await startWorker(env));
    const gateway = await startGateway(env);
    track(gateway.process);
    const account = await signUp(gateway.url);
    // Every fetch of the image takes 12 s: the frozen worker is caught holding the crop.
    const image = await startImageServer({ width: 40, height: 30, background: '#a73' }, { delayMs: 12_000 });
    try {
      const started = Date.now();
      const answer = fetch(`${gateway.url}/api/v1/tools/crop_image`, {
        method: 'POST',
        headers: { ...account.bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ image_url: image.url, x: 0, y: 0, width: 20, height: 10 }),
      });
      await waitFor(async () => (image.requests() > 0 ? true : undefined), { what: 'the crop to begin' });
      frozen.signal('SIGSTOP');
      track(await startWorker(env));
      const res = await answer;
      const body = (await res.json()) as { providerRunId?: string; code?: string };
      console.log(`      answered ${res.status} after ${Math.round((Date.now() - started) / 1000)} s`);
      assert.equal(res.status, 200, JSON.stringify(body));

      const call = async () => {
        const { rows } = await infra.pool.query<{ status: string; charges: number }>(
          `SELECT t.status, (SELECT count(*)::int FROM "CreditLedgerEntry" l WHERE l."toolCallId" = t.id) AS charges
             FROM "ToolCall" t WHERE t."providerRunId" = $1`,
          [body.providerRunId],
        );
        return rows[0];
      };
      assert.deepEqual(await call(), { status: 'SUCCEEDED', charges: 1 }, 'recorded and charged once');
    } finally {
      await frozen.kill();
      await image.close();
    }
  });

  it('goes on when the Temporal server restarts mid-run; /readyz says 503, then 200', async () => {
    const env = appEnv(infra, { PLAN_APPROVAL_TIMEOUT: '10m' });
    const gateway = await startGateway(env);
    track(gateway.process);
    track(await startWorker(env));
    const account = await signUp(gateway.url);
    const image = await startImageServer({ width: 32, height: 32, background: '#a37' });
    try {
      const waiting = await send(gateway.url, account, {
        text: 'crop this to the left half',
        image_urls: [image.url],
        planMode: true,
      });
      const waitpoint = await waitFor(
        async () => {
          const { rows } = await infra.pool.query<{ id: string }>(
            `SELECT id FROM "Waitpoint" WHERE "runId" = $1 AND status = 'PENDING'`,
            [waiting.runId],
          );
          return rows[0];
        },
        { what: 'the plan waitpoint' },
      );

      await infra.stopTemporal();
      const down = await waitFor(async () => ((await readiness(gateway.url)) === 503 ? 503 : undefined), {
        what: '/readyz to say 503',
      });
      await infra.startTemporal();
      const up = await waitFor(async () => ((await readiness(gateway.url)) === 200 ? 200 : undefined), {
        timeoutMs: 60_000,
        what: '/readyz to say 200 again',
      });
      console.log(`      /readyz while Temporal was down: ${down}, after its restart: ${up}`);

      const decided = await waitFor(
        async () => {
          const res = await fetch(
            `${gateway.url}/api/v1/chats/${waiting.chatId}/runs/${waiting.runId}/waitpoints/${waitpoint.id}/complete`,
            {
              method: 'POST',
              headers: { ...account.bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ approved: true }),
            },
          );
          await res.arrayBuffer();
          return res.status === 202 ? res.status : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: 'the approval to be taken' },
      );
      assert.equal(decided, 202);
      const after = await send(gateway.url, account, { text: 'hello after the restart' });
      assert.equal(after.status, 202);
      const ended = await waitFor(allTerminal([waiting.runId as string, after.runId as string]), {
        timeoutMs: 120_000,
        intervalMs: 500,
        what: 'both runs to end',
      });
      assert.deepEqual(
        ended.map((r) => r.status),
        ['COMPLETE', 'COMPLETE'],
      );
    } finally {
      await image.close();
    }
  });

  it('answers 503 at once while PostgreSQL is down, and recovers on its own', async () => {
    const env = appEnv(infra);
    const gateway = await startGateway(env);
    track(gateway.process);
    track(await startWorker(env));
    const account = await signUp(gateway.url);

    await infra.stopPostgres();
    try {
      assert.equal(await readiness(gateway.url), 503);
      const started = Date.now();
      const res = await fetch(`${gateway.url}/api/v1/chats`, {
        headers: account.bearer,
        signal: AbortSignal.timeout(20_000),
      });
      const elapsed = Date.now() - started;
      const body = (await res.json()) as { code: string };
      console.log(`      while PostgreSQL was down: GET /api/v1/chats → ${res.status} in ${elapsed} ms`);
      assert.equal(res.status, 503);
      assert.equal(body.code, 'SERVICE_UNAVAILABLE');
      assert.ok(elapsed < 10_000, `answered in ${elapsed} ms`);
    } finally {
      await infra.startPostgres();
    }
    await waitFor(async () => ((await readiness(gateway.url)) === 200 ? true : undefined), {
      timeoutMs: 30_000,
      what: '/readyz to recover',
    });
    const turn = await send(gateway.url, account, { text: 'hello after PostgreSQL came back' });
    assert.equal(turn.status, 202);
    const ended = await waitFor(allTerminal([turn.runId as string]), { timeoutMs: 60_000, what: 'the run' });
    assert.equal(ended[0]?.status, 'COMPLETE');
  });

  it("spends none of a delivery's attempts on its own PostgreSQL restart", async () => {
    const env = appEnv(infra);
    const gateway = await startGateway(env);
    track(gateway.process);
    track(await startWorker(env));
    const account = await signUp(gateway.url);
    // The first POST is held until PostgreSQL is down, so the attempt's record meets the outage.
    let posted!: () => void;
    const firstPost = new Promise<void>((resolve) => (posted = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const receiver = await startReceiver({
      beforeAnswer: async () => {
        if (held) return;
        held = true;
        posted();
        await released;
      },
    });
    try {
      await subscribe(gateway.url, account, receiver.url);
      const turn = await send(gateway.url, account, { text: 'hello while the database restarts' });
      assert.equal(turn.status, 202);
      await firstPost;
      await infra.stopPostgres();
      release();
      await infra.startPostgres();
      const deliveries = await waitFor(
        async () => {
          const { rows } = await infra.pool.query<{ id: string; status: string; attempts: number }>(
            `SELECT d.id, d.status, (SELECT count(*)::int FROM "WebhookAttempt" a WHERE a."deliveryId" = d.id) AS attempts
               FROM "WebhookDelivery" d WHERE d."idempotencyKey" = $1`,
            [turn.runId],
          );
          return rows.length === 2 && rows.every((r) => r.status === 'DELIVERED') ? rows : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500, what: "the run's two deliveries" },
      );
      const heldId = receiver.received[0]?.deliveryId;
      const posts = receiver.received.filter((r) => r.deliveryId === heldId).length;
      console.log(
        `      the delivery held across the restart: ${posts} POST(s), attempts ${deliveries.map((d) => d.attempts).join(', ')}`,
      );
      assert.equal(posts, 1, 'the receiver was posted once: its answer was recorded after the restart');
      assert.deepEqual(
        deliveries.map((d) => d.attempts),
        [1, 1],
      );
    } finally {
      await receiver.close();
    }
  });

  it('completes a turn while the webhook receiver is down; the delivery follows the retry schedule', async () => {
    const env = appEnv(infra);
    const gateway = await startGateway(env);
    track(gateway.process);
    track(await startWorker(env));
    const account = await signUp(gateway.url);
    const receiver = await startReceiver();
    await subscribe(gateway.url, account, receiver.url);
    await receiver.down();
    try {
      const turn = await send(gateway.url, account, { text: 'hello into the void' });
      const ended = await waitFor(allTerminal([turn.runId as string]), {
        timeoutMs: 60_000,
        what: 'the run',
      });
      assert.equal(ended[0]?.status, 'COMPLETE');
      const failed = await waitFor(
        async () => {
          const { rows } = await infra.pool.query<{ id: string; status: string }>(
            `SELECT id, status FROM "WebhookDelivery" WHERE "idempotencyKey" = $1 AND event = 'agent.completed'`,
            [turn.runId],
          );
          return rows[0]?.status === 'FAILED' ? rows[0] : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: 'the delivery to fail' },
      );
      const { rows: attempts } = await infra.pool.query<{ startedAt: Date; error: string }>(
        `SELECT "startedAt", error FROM "WebhookAttempt" WHERE "deliveryId" = $1 ORDER BY attempt`,
        [failed.id],
      );
      const gaps = attempts
        .slice(1)
        .map((a, i) => (a.startedAt.getTime() - (attempts[i] as typeof a).startedAt.getTime()) / 1000);
      console.log(`      attempts: ${attempts.length}, gaps: ${gaps.map((g) => g.toFixed(2)).join(', ')} s`);
      assert.equal(attempts.length, 4);
      for (const [i, expected] of [1, 5, 15].entries()) {
        const gap = gaps[i] as number;
        assert.ok(
          gap >= expected * 0.9 && gap <= expected + 3,
          `gap ${i + 1}: ${gap} s, expected about ${expected}`,
        );
      }
    } finally {
      await receiver.close();
    }
  });

  describe('two gateways and two workers', () => {
    let gateways: Gateway[];
    let env: Record<string, string>;
    let account: Account;

    before(async () => {
      // A paced model keeps the race's winner active while the other sends arrive: an unpaced
      // local turn can end (tens of ms) before the last of eight sends over two gateways is
      // admitted, which then rightly starts the chat's next run.
      env = appEnv(infra, { SEND_RATE_LIMIT_PER_MINUTE: '8', LOCAL_MODEL_PACE: '300ms' });
      gateways = [await startGateway(env), await startGateway(env)];
      for (const g of gateways) track(g.process);
      track(await startWorker(env));
      track(await startWorker(env));
      account = await signUp(gateways[0]?.url as string);
    });

    it('holds one active run per chat, the send rate limit and exactly-once delivery across them', async () => {
      const [a, b] = gateways as [Gateway, Gateway];
      const receiver = await startReceiver();
      await subscribe(a.url, account, receiver.url);
      try {
        const chat = await fetch(`${a.url}/api/v1/chats`, {
          method: 'POST',
          headers: { ...account.bearer, 'content-type': 'application/json' },
          body: '{}',
        });
        const { id: chatId } = (await chat.json()) as { id: string };
        const parallel = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            send(i % 2 ? b.url : a.url, account, { text: `race ${i}`, chatId }),
          ),
        );
        const statuses = parallel.map((r) => r.status).sort();
        console.log(`      8 parallel sends to one chat over two gateways: ${statuses.join(' ')}`);
        assert.deepEqual(
          statuses,
          [202, 409, 409, 409, 409, 409, 409, 409],
          `${JSON.stringify(parallel)}\n${a.process.output().slice(-3000)}`,
        );

        // The limit is 8 sends a minute per user, counted in the database: the race above used 8.
        const over = await Promise.all([
          send(a.url, account, { text: 'one more' }),
          send(b.url, account, { text: 'and one more' }),
        ]);
        assert.deepEqual(
          over.map((r) => r.status),
          [429, 429],
        );

        const winner = parallel.find((r) => r.status === 202) as { runId: string };
        await waitFor(allTerminal([winner.runId]), { timeoutMs: 60_000, what: 'the winning run' });
        // agent.completed is emitted after the run is marked COMPLETE: wait for both rows and posts.
        const rows = await waitFor(
          async () => {
            const { rows: found } = await infra.pool.query<{ id: string }>(
              `SELECT id FROM "WebhookDelivery" WHERE "idempotencyKey" = $1`,
              [winner.runId],
            );
            return found.length === 2 &&
              found.every((d) => receiver.received.some((r) => r.deliveryId === d.id))
              ? found
              : undefined;
          },
          { what: 'both deliveries to arrive' },
        );
        const posts = receiver.received.filter((r) => r.runId === winner.runId);
        console.log(`      deliveries for the run: ${rows.length} rows, ${posts.length} posts`);
        assert.equal(rows.length, 2);
        assert.equal(posts.length, 2, 'agent.started and agent.completed, once each');
      } finally {
        await receiver.close();
      }
    });
  });
});

/** Executions of the chat's workflow id, through the Temporal CLI's own view of the server. */
/** Executions of the chat's workflow in Temporal's visibility, those matching `where` when given. */
async function countExecutions(
  infra: Infra,
  env: Record<string, string>,
  chatId: string,
  where?: string,
): Promise<number> {
  const { client, connection } = createTemporalClient({
    address: infra.temporalAddress,
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
  });
  try {
    let n = 0;
    const query = `WorkflowId = '${chatId}'${where ? ` AND ${where}` : ''}`;
    for await (const _ of client.workflow.list({ query })) n++;
    return n;
  } finally {
    await connection.close();
  }
}
