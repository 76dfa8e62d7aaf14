import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOperatorPort } from '../../apps/gateway/operator';
import type { ModelReply } from '../../core/model/types';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { createLogger } from '../../core/logging/logger';
import { countingPool } from '../support/counting-pool';
import { memoryStream } from '../support/log-sink';
import { sampleSum } from '../support/prometheus';
import { readEvents, type SseEvent } from '../support/sse';
import { waitFor } from '../support/wait';
import { startReconciler } from '../../operations/runs';
import { openRunStream, type RunStreamEvent } from '../../operations/runs/events';
import { createStreams } from '../../operations/streams';
import { createNotificationHub } from '../../core/db/notification-hub';

/**
 * The live stream of a run: the snapshot, then every change in commit order, resumable with
 * Last-Event-ID, served by any gateway for a run started through another.
 */
describe('the run event stream', function () {
  this.timeout(90_000);
  let gatewayA: TestGateway;
  let gatewayB: TestGateway;
  let worker: TestWorker;
  let user: TestUser;
  const model = new ScriptedModel([]);

  before(async () => {
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `events-${randomUUID()}`,
      IMAGE_PROVIDER: 'local-preview',
      STREAM_HEARTBEAT_INTERVAL: '200ms',
    });
    worker = await startWorker({ config, deps: { model } });
    gatewayA = await startGateway({ config });
    gatewayB = await startGateway({ config });
    user = await createTestUser();
  });
  after(async () => {
    await gatewayA.close();
    await gatewayB.close();
    await worker.stop();
  });

  async function send(
    body: Record<string, unknown>,
    who: TestUser = user,
  ): Promise<{ chatId: string; runId: string }> {
    const res = await fetch(`${gatewayA.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...who.bearer },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 202);
    return (await res.json()) as { chatId: string; runId: string };
  }

  function open(
    gateway: TestGateway,
    turn: { chatId: string; runId: string },
    headers: Record<string, string> = {},
    who: TestUser = user,
  ) {
    return fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/events`, {
      headers: { ...who.bearer, ...headers },
    });
  }

  /** Revokes the user's API key with their session, on gateway A. */
  async function revokeKey(who: TestUser): Promise<void> {
    const res = await fetch(`${gatewayA.url}/api/keys/${who.apiKeyId}`, {
      method: 'DELETE',
      headers: { cookie: who.cookie },
    });
    assert.equal(res.status, 204);
  }

  /**
   * Runs `test` on a turn of a user of its own whose model step holds after half its text, so the
   * run stays live until the test is done with it (then it is released).
   */
  async function whileHeld(
    test: (owner: TestUser, turn: { chatId: string; runId: string }) => Promise<void>,
  ): Promise<void> {
    const owner = await createTestUser();
    model.replies.push({ text: 'Held while the test runs.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const turn = await send({ text: 'stream this' }, owner);
    try {
      await test(owner, turn);
    } finally {
      model.release();
    }
  }

  /** The stream's reader, once its snapshot has come; the stream must stay open until then. */
  async function pastSnapshot(res: Response): Promise<ReadableStreamDefaultReader<string>> {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/^event: snapshot$/m.test(text)) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream is open while the run is live');
      text += value;
    }
    return reader;
  }

  /** The kinds of a stream's events, read to its end: `snapshot`, the events' names, `heartbeat`. */
  async function kindsOf(stream: AsyncGenerator<RunStreamEvent>): Promise<string[]> {
    const kinds: string[] = [];
    for await (const event of stream) kinds.push(event.kind === 'event' ? event.event : event.kind);
    return kinds;
  }

  /** The text a client following these events shows, starting from the snapshot's. */
  function textOf(events: SseEvent[], from = ''): string {
    let text = from;
    for (const e of events) {
      if (e.event === 'snapshot') text = e.data.text as string;
      if (e.event === 'text.delta')
        text = e.data.replace ? (e.data.text as string) : text + String(e.data.text);
    }
    return text;
  }

  function assertIncreasing(events: SseEvent[]) {
    for (let i = 1; i < events.length; i++)
      assert.ok(events[i]!.id > events[i - 1]!.id, `ids increase: ${events.map((e) => e.id).join(',')}`);
  }

  it("streams a turn's text as it is written and ends with its terminal status", async () => {
    const reply = 'The stream carries this answer in pieces.';
    model.replies.push({ text: reply, toolCalls: [] });
    model.holdAfterFirstHalf();
    const turn = await send({ text: 'hello' });
    const res = await open(gatewayA, turn);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reading = readEvents(res);
    // The model holds after its first half: release it once that half is written.
    const { db } = await testStack();
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ text: string }>(`SELECT text FROM "Run" WHERE id = $1`, [
          turn.runId,
        ]);
        return rows[0]?.text || undefined;
      },
      { what: 'the first half of the text' },
    );
    model.release();
    const { events, ended } = await reading;
    assert.ok(ended, 'the server closes the stream');
    assert.equal(events[0]?.event, 'snapshot');
    assertIncreasing(events);
    assert.equal(textOf(events), reply);
    assert.ok(
      events.filter((e) => e.event === 'text.delta').length >= 1,
      'the text arrives as deltas, not only in the snapshot',
    );
    const last = events.at(-1);
    assert.deepEqual([last?.event, last?.data.status], ['status', 'COMPLETE']);
  });

  it('resumes after a dropped connection on another gateway, losing and repeating nothing, through plan approval and tools', async () => {
    const plan: ModelReply = {
      text: 'I will draw a lighthouse.',
      toolCalls: [{ id: 'call_1', toolName: 'ai_image_2', input: { prompt: 'a lighthouse' } }],
    };
    model.replies.push(plan, { text: 'Here is your lighthouse.', toolCalls: [] });
    const turn = await send({ text: 'draw a lighthouse', planMode: true });

    // On gateway B, for a run sent through A: read up to the plan, then drop the connection.
    const first = await readEvents(await open(gatewayB, turn), {
      stopAfter: (e) => e.event === 'waitpoint.opened',
    });
    assert.equal(first.ended, false);
    const opened = first.events.at(-1);
    assert.equal(opened?.data.status, 'PENDING');
    const lastSeen = opened!.id;

    const decided = await fetch(
      `${gatewayA.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${String(opened!.data.id)}/complete`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...user.bearer },
        body: JSON.stringify({ approved: true }),
      },
    );
    assert.equal(decided.status, 202);

    const resumed = await readEvents(await open(gatewayB, turn, { 'last-event-id': String(lastSeen) }));
    assert.ok(resumed.ended);
    assert.ok(
      resumed.events.every((e) => e.event !== 'snapshot'),
      'a resume sends no snapshot',
    );
    assert.ok(resumed.events[0]!.id > lastSeen);

    // The whole history, from the start, is exactly what the two connections saw together.
    const whole = await readEvents(await open(gatewayA, turn, { 'last-event-id': '0' }));
    const seen = [...first.events.filter((e) => e.event !== 'snapshot'), ...resumed.events];
    const fromSnapshot = whole.events.filter((e) => e.id > first.events[0]!.id);
    assert.deepEqual(
      [...first.events.slice(1), ...resumed.events].map((e) => e.id),
      fromSnapshot.map((e) => e.id),
    );
    assert.deepEqual(seen, fromSnapshot);
    assertIncreasing(whole.events);
    assert.deepEqual(
      whole.events.map((e) => e.event).filter((e) => e !== 'text.delta'),
      [
        'status',
        'status',
        'waitpoint.opened',
        'waitpoint.resolved',
        'status',
        'tool.started',
        'tool.finished',
        'status',
      ],
    );
    assert.deepEqual(
      whole.events.filter((e) => e.event === 'status').map((e) => e.data.status),
      ['RUNNING', 'WAITING', 'RUNNING', 'COMPLETE'],
    );
    const finished = whole.events.find((e) => e.event === 'tool.finished');
    assert.equal(finished?.data.status, 'SUCCEEDED');
    assert.equal(textOf(whole.events), 'I will draw a lighthouse.\n\nHere is your lighthouse.');

    // A stream opened after the end is the final snapshot alone.
    const after = await readEvents(await open(gatewayB, turn));
    assert.deepEqual(
      after.events.map((e) => [e.event, e.data.status]),
      [['snapshot', 'COMPLETE']],
    );
  });

  it('keeps an idle stream open with : ping comments', async () => {
    model.replies.push({ text: 'Held.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const turn = await send({ text: 'wait a little' });
    const stop = new AbortController();
    const res = await fetch(`${gatewayA.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/events`, {
      headers: user.bearer,
      signal: stop.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/^: ping$/gm) ?? []).length < 2) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream stays open while the run is live');
      text += value;
    }
    stop.abort();
    model.release();
    assert.match(text, /^event: snapshot$/m);
  });

  it('ends a stream when its key is revoked, on another gateway; the reconnect is told 401', () =>
    whileHeld(async (owner, turn) => {
      const reader = await pastSnapshot(await open(gatewayB, turn, {}, owner));
      await revokeKey(owner);
      // The run is still held: only the revocation can end the stream.
      for (;;) if ((await reader.read()).done) break;
      const again = await open(gatewayB, turn, {}, owner);
      assert.equal(again.status, 401);
    }));

  it('ends, one heartbeat interval after its open, a stream whose key was revoked before it began listening', () =>
    whileHeld(async (owner, turn) => {
      // The caller as the route's check found it a moment before the revocation.
      const caller = { userId: owner.userId, apiKeyId: owner.apiKeyId, via: 'rest' } as const;
      const openOnB = () =>
        gatewayB.ops.runs.streamRun(caller, turn, { signal: new AbortController().signal });
      // A stream past its own check (made after its first heartbeat, so done by its second) ends
      // only when gateway B hears of the revocation; the stream opened after that has nothing left
      // to hear, so nothing but its own check can end it.
      const earlier = await openOnB();
      for (let heartbeats = 0; heartbeats < 2;) {
        const next = await earlier.next();
        assert.ok(!next.done, 'the stream is open while the run is live');
        if (next.value.kind === 'heartbeat') heartbeats++;
      }
      await revokeKey(owner);
      await kindsOf(earlier);
      const opened = Date.now();
      const kinds = await kindsOf(await openOnB());
      // The run is still held: only the key's check can have ended it, one heartbeat interval
      // (200 ms) after the open, not at once (a burst of opens would each cost a query).
      assert.deepEqual(kinds.slice(0, 1), ['snapshot']);
      assert.ok(Date.now() - opened >= 200, `ended ${Date.now() - opened} ms after its open`);
    }));

  it('ends a console stream when its person signs out, on another gateway; the reconnect is told 401', () =>
    whileHeld(async (owner, turn) => {
      const openInConsole = () =>
        fetch(`${gatewayB.url}/console/api/v1/chats/${turn.chatId}/runs/${turn.runId}/events`, {
          headers: { cookie: owner.cookie },
        });
      const reader = await pastSnapshot(await openInConsole());
      const signedOut = await fetch(`${gatewayA.url}/api/auth/sign-out`, {
        method: 'POST',
        headers: { cookie: owner.cookie, origin: gatewayA.url },
      });
      assert.equal(signedOut.status, 204);
      // The run is still held: only the sign-out can end the stream.
      for (;;) if ((await reader.read()).done) break;
      assert.equal((await openInConsole()).status, 401);
    }));

  it("ends a console stream at its session's expiry, which no notification announces", () =>
    whileHeld(async (owner, turn) => {
      const { db } = await testStack();
      const { rows } = await db.pool.query<{ at: Date }>(
        `UPDATE "Session" SET "expiresAt" = now() + interval '1 second' WHERE id = $1 RETURNING "expiresAt" AS at`,
        [owner.sessionId],
      );
      // The caller as the console's session check found it, a moment before the expiry.
      const stream = await gatewayB.ops.runs.streamRun(
        { userId: owner.userId, sessionId: owner.sessionId, via: 'console' },
        turn,
        { signal: new AbortController().signal },
      );
      const kinds = await kindsOf(stream);
      // The run is still held: only the session's expiry can have ended it, and not before it.
      assert.equal(kinds[0], 'snapshot');
      assert.ok(Date.now() >= rows[0]!.at.getTime(), 'the stream ended at the expiry, not before');
    }));

  it('checks a busy stream too: one heartbeat interval after its open, whether or not events kept it from a quiet one', () =>
    whileHeld(async (owner, turn) => {
      const { db } = await testStack();
      await db.pool.query(`UPDATE "Session" SET "expiresAt" = now() + interval '1 second' WHERE id = $1`, [
        owner.sessionId,
      ]);
      // A hub already listening: the wake a connection's opening gives its subscribers (which
      // checks a stream's credential) must not stand in for the check under test.
      const { config, logger } = gatewayB.deps;
      const hub = createNotificationHub({
        url: config.DATABASE_URL,
        logger,
        channels: ['run_events', 'sessions'],
      });
      const unsubscribe = hub.subscribe('run_events', randomUUID(), () => undefined);
      try {
        await waitFor(async () => hub.listening() || undefined, { what: 'the hub listening' });
        const caller = { userId: owner.userId, sessionId: owner.sessionId, via: 'console' } as const;
        const stream = await openRunStream(
          gatewayB.deps,
          hub,
          { userId: owner.userId, ...turn },
          {},
          await createStreams(gatewayB.deps, hub).open(caller, new AbortController().signal),
        );
        // Events four times a heartbeat interval, for up to 100 of them: the stream is never quiet.
        const most = 100;
        let appended = 0;
        let ended = false;
        const appending = (async () => {
          while (!ended && appended < most) {
            await db.pool.query(`SELECT run_event_append($1, 'text.delta', '{"text": "."}'::jsonb)`, [
              turn.runId,
            ]);
            appended++;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const kinds = await kindsOf(stream);
        ended = true;
        await appending;
        assert.ok(!kinds.includes('heartbeat'), 'the stream was never quiet');
        assert.ok(
          appended < most,
          `the stream ended at its session's expiry, while events still came (${appended})`,
        );
      } finally {
        unsubscribe();
        await hub.close();
      }
    }));

  it('counts the streams it is sending in agent_sse_streams_open on /metrics, and forgets those that ended', () =>
    whileHeld(async (owner, turn) => {
      const operator: Server = await startOperatorPort(gatewayA.ops, gatewayA.deps.config, {
        port: 0,
        host: '127.0.0.1',
      });
      const openNow = async () => {
        const res = await fetch(`http://127.0.0.1:${(operator.address() as AddressInfo).port}/metrics`);
        assert.equal(res.status, 200);
        return sampleSum(await res.text(), 'agent_sse_streams_open');
      };
      try {
        const before = await openNow();
        const readers = await Promise.all(
          [1, 2, 3].map(async () => pastSnapshot(await open(gatewayA, turn, {}, owner))),
        );
        assert.equal(await openNow(), before + 3);
        for (const reader of readers) await reader.cancel();
        // The gateway learns of a client's going from its socket's close.
        await waitFor(async () => ((await openNow()) === before ? true : undefined), {
          what: 'the closed streams uncounted',
        });
      } finally {
        operator.closeAllConnections();
        operator.close();
      }
    }));

  it('reads nothing while a stream is idle: a heartbeat is a write, an event is read when notified', () =>
    whileHeld(async (owner, turn) => {
      const { db } = await testStack();
      const { deps } = gatewayB;
      const counted = countingPool(deps.db.pool);
      const reads = () => counted.statements();
      const hub = createNotificationHub({
        url: deps.config.DATABASE_URL,
        logger: deps.logger,
        channels: ['run_events'],
      });
      // Listening first: the wake a connection's opening gives its subscribers is a read of its own.
      const unsubscribe = hub.subscribe('run_events', randomUUID(), () => undefined);
      try {
        await waitFor(async () => hub.listening() || undefined, { what: 'the hub listening' });
        // No credential to check: the stream's own reads are all that is counted.
        const caller = { userId: owner.userId, via: 'rest' } as const;
        const stream = await openRunStream(
          { ...deps, db: { ...deps.db, pool: counted.pool } },
          hub,
          { userId: owner.userId, ...turn },
          {},
          await createStreams(deps, hub).open(caller, new AbortController().signal),
        );
        const next = async () => {
          const item = await stream.next();
          assert.ok(!item.done, 'the stream is open while the run is live');
          return item.value;
        };
        // Four heartbeats in a row, after the model's first half is written (events reset the count).
        let quiet = 0;
        let readsAtQuiet = reads();
        for (let items = 0; quiet < 4; items++) {
          assert.ok(items < 100, 'the stream went quiet');
          if ((await next()).kind !== 'heartbeat') {
            quiet = 0;
            continue;
          }
          if (quiet === 0) readsAtQuiet = reads();
          else
            assert.equal(
              reads() - readsAtQuiet,
              0,
              `${reads() - readsAtQuiet} reads over ${quiet} heartbeats`,
            );
          quiet++;
        }
        const readsWhenQuiet = reads();

        await db.pool.query(`SELECT run_event_append($1, 'text.delta', '{"text": "!"}'::jsonb)`, [
          turn.runId,
        ]);
        let event: RunStreamEvent;
        do event = await next();
        while (event.kind === 'heartbeat');
        assert.equal(event.kind === 'event' && event.event, 'text.delta');
        assert.ok(reads() > readsWhenQuiet, 'the notified event was read');
        await stream.return(undefined);
      } finally {
        unsubscribe();
        await hub.close();
      }
    }));

  it('refuses the stream past MAX_OPEN_STREAMS_PER_GATEWAY with 503, logs its open-file limit at start, and answers other requests', () =>
    whileHeld(async (owner, turn) => {
      const log = memoryStream();
      const config = (await testStack()).config({
        TEMPORAL_TASK_QUEUE: gatewayA.deps.config.TEMPORAL_TASK_QUEUE,
        MAX_OPEN_STREAMS_PER_GATEWAY: '2',
        LOG_LEVEL: 'info',
      });
      const full = await startGateway({
        config,
        deps: { logger: createLogger({ level: 'info', name: 'full' }, log.stream) },
      });
      try {
        const started = log
          .text()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((line) => line.maxOpenStreams !== undefined);
        assert.equal(started?.maxOpenStreams, 2);
        assert.ok(Number(started?.openFilesSoft) > 0, JSON.stringify(started));

        const readers = [await pastSnapshot(await open(full, turn, {}, owner))];
        readers.push(await pastSnapshot(await open(full, turn, {}, owner)));
        const refused = await open(full, turn, {}, owner);
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '5');
        const body = (await refused.json()) as { code: string; error: string };
        assert.equal(body.code, 'SERVICE_UNAVAILABLE');
        assert.match(body.error, /open streams and waits/);
        // Everything else is answered as before.
        const poll = await fetch(`${full.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
          headers: owner.bearer,
        });
        assert.equal(poll.status, 200);

        await readers.pop()!.cancel();
        const reopened = await waitFor(
          async () => {
            const res = await open(full, turn, {}, owner);
            if (res.status === 200) return res;
            assert.equal(res.status, 503);
            await res.body?.cancel();
            return undefined;
          },
          { what: 'a place given back' },
        );
        await (await pastSnapshot(reopened)).cancel();
        for (const reader of readers) await reader.cancel();
      } finally {
        await full.close();
      }
    }));

  it("answers 404 for another user's run and 400 for a malformed Last-Event-ID, before streaming anything", async () => {
    model.replies.push({ text: 'mine', toolCalls: [] });
    const turn = await send({ text: 'private' });
    const other = await createTestUser();
    const res = await open(gatewayA, turn, {}, other);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
    const resumed = await open(gatewayA, turn, { 'last-event-id': '1' }, other);
    assert.equal(resumed.status, 404);
    const missing = await open(gatewayA, { chatId: turn.chatId, runId: randomUUID() });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, 'RUN_NOT_FOUND');
    const bad = await open(gatewayA, turn, { 'last-event-id': 'abc' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, 'INVALID_REQUEST');
  });

  it('prunes the events of runs finished longer than RUN_EVENTS_RETENTION ago; a resume then gets the final snapshot', async () => {
    const { db } = await testStack();
    const eventCount = async (runId: string) =>
      Number(
        (
          await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "RunEvent" WHERE "runId" = $1`, [
            runId,
          ])
        ).rows[0]?.n,
      );
    model.replies.push({ text: 'Kept a while.', toolCalls: [] });
    const old = await send({ text: 'old' });
    model.replies.push({ text: 'Still fresh.', toolCalls: [] });
    const first = await readEvents(await open(gatewayA, old));
    assert.equal(first.events.at(-1)?.data.status, 'COMPLETE');
    const fresh = await send({ text: 'fresh' });
    await readEvents(await open(gatewayA, fresh));

    // Within the window a resume gets what followed the client's event, and no snapshot.
    const resumed = await readEvents(await open(gatewayA, old, { 'last-event-id': '1' }));
    assert.notEqual(resumed.events[0]?.event, 'snapshot');
    assert.deepEqual(resumed.events.at(-1)?.data.status, 'COMPLETE');

    // One run finished past the window (7 days by default), its events as old, the other just now.
    await db.pool.query(`UPDATE "Run" SET "finishedAt" = now() - interval '8 days' WHERE id = $1`, [
      old.runId,
    ]);
    await db.pool.query(`UPDATE "RunEvent" SET "createdAt" = now() - interval '8 days' WHERE "runId" = $1`, [
      old.runId,
    ]);
    const before = { old: await eventCount(old.runId), fresh: await eventCount(fresh.runId) };
    assert.ok(before.old > 1 && before.fresh > 1);
    const reconciler = startReconciler(gatewayA.deps, 60_000);
    try {
      // Another process's pass may hold the reconciler's lock: wait for a pass of this one.
      const pass = await waitFor(async () => (await reconciler.pass()) ?? undefined, {
        what: 'a reconciler pass',
      });
      assert.ok(pass.retention.runEvents >= before.old, `${pass.retention.runEvents} pruned`);
    } finally {
      await reconciler.stop();
    }
    assert.equal(await eventCount(old.runId), 0);
    assert.equal(await eventCount(fresh.runId), before.fresh, 'a run inside the window keeps its events');

    // A resume can no longer be answered with what followed: it gets the final snapshot and the end.
    const afterPruning = await readEvents(await open(gatewayB, old, { 'last-event-id': '1' }));
    assert.ok(afterPruning.ended);
    assert.deepEqual(
      afterPruning.events.map((e) => e.event),
      ['snapshot'],
    );
    assert.equal(afterPruning.events[0]?.data.status, 'COMPLETE');
    assert.equal(afterPruning.events[0]?.data.text, 'Kept a while.');
    assert.equal(
      afterPruning.events[0]?.id,
      first.events.at(-1)?.id,
      'the snapshot names the last event it reflects',
    );
  });
});
