import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDatabase, type Database } from '../../core/db/client';
import type { QueuedTurn } from '../../operations/runs';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { readEvents, type SseEvent } from '../support/sse';
import { waitFor } from '../support/wait';

interface ChatSnapshot {
  chatId: string;
  runs: { id: string; status: string; waitingFor: { kind: string; position?: number } | null }[];
}
interface OfRun {
  runId: string;
  data: Record<string, unknown>;
}

/**
 * A chat's own stream (issue 49), GET /api/v1/chats/{chatId}/events: the chat's unfinished runs,
 * then every event of every run of the chat in commit order, from any gateway, resumable with
 * Last-Event-ID; and MCP's follow_chat, the same as a long poll. Two gateways with their own pools.
 */
describe("a chat's event stream", function () {
  this.timeout(3 * 60_000);
  let worker: TestWorker;
  let model: ScriptedModel;
  let gateways: TestGateway[];
  let db2: Database;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    model = new ScriptedModel([]);
    const config = stack.config({
      TEMPORAL_TASK_QUEUE: `chat-stream-${randomUUID()}`,
      STREAM_HEARTBEAT_INTERVAL: '200ms',
    });
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

  const send = async (gateway: TestGateway, body: Record<string, unknown>): Promise<QueuedTurn> => {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as QueuedTurn;
  };
  const open = (gateway: TestGateway, chatId: string, headers: Record<string, string> = {}, who = user) =>
    fetch(`${gateway.url}/api/v1/chats/${chatId}/events`, { headers: { ...who.bearer, ...headers } });
  const runStatus = async (chatId: string, runId: string): Promise<string> => {
    const res = await fetch(`${gateways[0]!.url}/api/v1/chats/${chatId}/runs/${runId}`, {
      headers: user.bearer,
    });
    return ((await res.json()) as { status: string }).status;
  };
  /** Every event of the chat's runs after `after`, as recorded: what a follower must have seen. */
  const recorded = async (chatId: string, after: number) => {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ runId: string; seq: string; type: string }>(
      `SELECT "runId", seq, type FROM "RunEvent" WHERE "chatId" = $1 AND seq > $2 ORDER BY seq`,
      [chatId, after],
    );
    return rows.map((r) => `${r.seq} ${r.type} ${r.runId}`);
  };
  const seen = (events: SseEvent[]) =>
    events
      .filter((e) => e.event !== 'snapshot')
      .map((e) => `${e.id} ${e.event} ${(e.data as unknown as OfRun).runId}`);
  const isEnd = (runId: string) => (e: SseEvent) =>
    e.event === 'status' &&
    (e.data as unknown as OfRun).runId === runId &&
    ['COMPLETE', 'FAILED', 'CANCELLED'].includes(String((e.data as unknown as OfRun).data.status));

  it('follows a chat over two gateways: its runs queued, started, streamed and ended in order; a resume elsewhere loses and repeats nothing', async () => {
    model.replies.push(
      { text: 'first answer', toolCalls: [] },
      { text: 'second answer', toolCalls: [] },
      { text: 'third answer', toolCalls: [] },
    );
    model.holdAtStart();
    const head = await send(gateways[0]!, { text: 'head turn' });
    await waitFor(async () => ((await runStatus(head.chatId, head.runId)) === 'RUNNING' ? true : undefined));

    // Opened on the other gateway: the chat as it stands, its running turn first.
    const first = await open(gateways[1]!, head.chatId);
    assert.equal(first.status, 200);
    assert.match(first.headers.get('content-type') ?? '', /^text\/event-stream/);
    const queued: QueuedTurn[] = [];
    let sending: Promise<void> | undefined;
    let queuedSeen = 0;
    const part1 = await readEvents(first, {
      stopAfter: (e) => {
        // Sent while the stream reads on: the turns queue behind the head after the snapshot.
        if (e.event === 'snapshot')
          sending = (async () => {
            queued.push(
              await send(gateways[0]!, { text: 'second', chatId: head.chatId, onActiveRun: 'enqueue' }),
            );
            queued.push(
              await send(gateways[1]!, { text: 'third', chatId: head.chatId, onActiveRun: 'enqueue' }),
            );
          })();
        return e.event === 'queued' && ++queuedSeen === 2;
      },
    });
    await sending;
    const snapshot = part1.events[0]!.data as unknown as ChatSnapshot;
    assert.equal(part1.events[0]!.event, 'snapshot');
    assert.deepEqual(
      snapshot.runs.map((r) => [r.id, r.status]),
      [[head.runId, 'RUNNING']],
    );
    const queuedEvents = part1.events
      .filter((e) => e.event === 'queued')
      .map((e) => e.data as unknown as OfRun);
    assert.deepEqual(
      queuedEvents.map((e) => [e.runId, e.data.position]),
      [
        [queued[0]!.runId, 1],
        [queued[1]!.runId, 2],
      ],
    );

    // The connection dropped; the turns go on meanwhile. Resumed on the first gateway.
    model.release();
    const lastSeen = part1.events.at(-1)!.id!;
    const part2 = await readEvents(
      await open(gateways[0]!, head.chatId, { 'last-event-id': String(lastSeen) }),
      {
        stopAfter: isEnd(queued[1]!.runId),
      },
    );
    assert.notEqual(part2.events[0]?.event, 'snapshot', 'a resume sends no snapshot');

    // Together, exactly the chat's recorded events after the snapshot: none lost, none twice.
    const all = [...seen(part1.events), ...seen(part2.events)];
    assert.deepEqual(all, await recorded(head.chatId, Number(part1.events[0]!.id)));
    const ids = [...part1.events, ...part2.events].map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      ids.map((_, i) => ids[0]! + i),
      'one number per event of the chat, without a gap',
    );
    // Each run in turn: the head ends before the next starts, and each says its whole answer.
    const ofRun = (runId: string) =>
      [...part1.events, ...part2.events]
        .filter((e) => e.event !== 'snapshot')
        .map((e) => ({ event: e.event, ...(e.data as unknown as OfRun) }))
        .filter((e) => e.runId === runId);
    for (const [turn, answer] of [
      [head, 'first answer'],
      [queued[0]!, 'second answer'],
      [queued[1]!, 'third answer'],
    ] as const) {
      const events = ofRun(turn.runId);
      const text = events
        .filter((e) => e.event === 'text.delta')
        .map((e) => String(e.data.text))
        .join('');
      assert.equal(text, answer);
      assert.deepEqual(events.at(-1), { event: 'status', runId: turn.runId, data: { status: 'COMPLETE' } });
    }
    const statuses = all.filter((line) => line.includes(' status '));
    const startOf = (runId: string) =>
      statuses.findIndex((l) => l.endsWith(runId) && ofRun(runId).length > 0);
    assert.ok(startOf(head.runId) < startOf(queued[0]!.runId));
    assert.ok(startOf(queued[0]!.runId) < startOf(queued[1]!.runId));
  });

  it('sends a fresh snapshot when a resume cannot go on without a gap (events pruned, or a number not reached)', async () => {
    model.replies.push({ text: 'done', toolCalls: [] });
    const turn = await send(gateways[0]!, { text: 'hello' });
    await waitFor(async () => ((await runStatus(turn.chatId, turn.runId)) === 'COMPLETE' ? true : undefined));
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ seq: string }>(
      `SELECT seq FROM "ChatEventSeq" WHERE "chatId" = $1`,
      [turn.chatId],
    );
    const last = Number(rows[0]!.seq);

    // Beyond the chat's last event: a snapshot, at the last event.
    const ahead = await readEvents(
      await open(gateways[1]!, turn.chatId, { 'last-event-id': String(last + 5) }),
      {
        stopAfter: () => true,
      },
    );
    assert.equal(ahead.events[0]!.event, 'snapshot');
    assert.equal(ahead.events[0]!.id, last);
    assert.deepEqual((ahead.events[0]!.data as unknown as ChatSnapshot).runs, []);

    // The run's events pruned (RUN_EVENTS_RETENTION): a resume from before them gets a snapshot.
    await db.pool.query(`DELETE FROM "RunEvent" WHERE "runId" = $1`, [turn.runId]);
    const pruned = await readEvents(await open(gateways[0]!, turn.chatId, { 'last-event-id': '1' }), {
      stopAfter: () => true,
    });
    assert.equal(pruned.events[0]!.event, 'snapshot');
    assert.equal(pruned.events[0]!.id, last);

    // Caught up: the stream waits, sending only pings, nothing repeated.
    const res = await open(gateways[0]!, turn.chatId, { 'last-event-id': String(last) });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /^: ping\n\n/);
    await reader.cancel();
  });

  it("answers 404 for a chat that is not the caller's, 400 for a bad Last-Event-ID, and ends when the chat is deleted", async () => {
    const turn = await send(gateways[0]!, { text: 'mine' });
    const other = await createTestUser();
    const theirs = await open(gateways[0]!, turn.chatId, {}, other);
    assert.equal(theirs.status, 404);
    assert.equal(((await theirs.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
    const unknown = await open(gateways[0]!, randomUUID(), { 'last-event-id': '3' });
    assert.equal(unknown.status, 404);
    await unknown.body?.cancel();
    const bad = await open(gateways[0]!, turn.chatId, { 'last-event-id': 'soon' });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /last-event-id/);

    const following = await open(gateways[1]!, turn.chatId);
    assert.equal(following.status, 200);
    const read = readEvents(following);
    await waitFor(async () => ((await runStatus(turn.chatId, turn.runId)) === 'COMPLETE' ? true : undefined));
    const deleted = await fetch(`${gateways[0]!.url}/api/v1/chats/${turn.chatId}`, {
      method: 'DELETE',
      headers: user.bearer,
    });
    assert.ok(deleted.ok, String(deleted.status));
    const { events, ended } = await read;
    assert.ok(ended, 'the server ended the stream');
    assert.equal(events[0]!.event, 'snapshot');
  });

  it('MCP follow_chat: the snapshot, then each batch of events after the last, waiting for the next', async () => {
    model.replies.push({ text: 'over MCP', toolCalls: [] });
    model.holdAtStart();
    const turn = await send(gateways[0]!, { text: 'follow me' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gateways[1]!.url}/mcp`), {
      requestInit: { headers: user.bearer },
    });
    const client = new Client({ name: 'chat-stream-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      type Followed = {
        events: { id: number; event: string; runId?: string; data: unknown }[];
        lastEventId: number;
      };
      const follow = async (args: Record<string, unknown>): Promise<Followed> => {
        const result = await client.callTool({
          name: 'follow_chat',
          arguments: { chatId: turn.chatId, ...args },
        });
        assert.ok(!result.isError, JSON.stringify(result.content));
        return result.structuredContent as Followed;
      };
      const opening = await follow({});
      assert.deepEqual(
        opening.events.map((e) => e.event),
        ['snapshot'],
      );
      model.release();
      const lines: string[] = [];
      let text = '';
      let after = opening.lastEventId;
      while (!lines.includes('COMPLETE')) {
        const next = await follow({ after, timeoutSeconds: 20 });
        assert.ok(next.events.length > 0, 'an event came within the wait');
        assert.equal(next.events[0]!.id, after + 1, 'the next call goes on where the last ended');
        for (const e of next.events) {
          assert.equal(e.runId, turn.runId);
          const data = e.data as { status?: string; text?: string };
          if (e.event === 'status') lines.push(String(data.status));
          if (e.event === 'text.delta') text += data.text;
        }
        after = next.lastEventId;
      }
      assert.equal(text, 'over MCP');
      assert.equal(lines.filter((l) => l === 'COMPLETE').length, 1);
      // Nothing after the end: the wait runs out with no event.
      const idle = await follow({ after, timeoutSeconds: 1 });
      assert.deepEqual(idle, { events: [], lastEventId: after });
      const refused = await client.callTool({ name: 'follow_chat', arguments: { chatId: randomUUID() } });
      assert.ok(refused.isError);
      assert.match(JSON.stringify(refused.content), /CHAT_NOT_FOUND/);
    } finally {
      await client.close();
    }
  });
});
