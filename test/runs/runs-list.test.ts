import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';
import { agentWorkflowId } from '../../workflows/agent.contract';
import { runMetadataSearchAttribute } from '../../workflows/search-attributes';

interface Turn {
  chatId: string;
  runId: string;
  messageId: string;
}
interface RunSummary {
  id: string;
  chatId: string;
  messageId: string;
  status: string;
  metadata: Record<string, string>;
  createdAt: string;
}
interface RunPage {
  data: RunSummary[];
  nextCursor: string | null;
}

/**
 * Runs as a resource: a chat's runs and the user's runs over all chats, newest first, by cursor,
 * filtered by status, time and the metadata a send carries (also a Temporal search attribute).
 */
describe('the runs lists and run metadata', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  /** A gateway whose runs no worker takes: they stay QUEUED. */
  let idleGateway: TestGateway;
  let worker: TestWorker;
  let owner: TestUser;
  let stranger: TestUser;
  const model = new ScriptedModel([]);
  /** The owner's turns, oldest first: two in chat 1, one in chat 2, one in chat 3, one QUEUED in chat 4. */
  const turns: Turn[] = [];
  const tag = `acme-${randomUUID()}`;

  async function sendVia(url: string, who: TestUser, body: Record<string, unknown>) {
    return fetch(`${url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...who.bearer },
      body: JSON.stringify(body),
    });
  }
  async function get(path: string, who: TestUser = owner) {
    return fetch(`${gateway.url}${path}`, { headers: who.bearer });
  }
  async function list(path: string, who: TestUser = owner): Promise<RunPage> {
    const res = await get(path, who);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as RunPage;
  }
  /** Every page of a list, following nextCursor. */
  async function all(path: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page = await list(
        `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.ok(page.data.length <= limit);
      ids.push(...page.data.map((r) => r.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    return { ids, pages };
  }
  async function completed(turn: Turn): Promise<void> {
    await waitFor(
      async () => {
        const res = await get(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`);
        const run = (await res.json()) as { status: string };
        return run.status === 'COMPLETE' ? true : undefined;
      },
      { what: `run ${turn.runId} COMPLETE` },
    );
  }
  const ids = (...indexes: number[]) => indexes.map((i) => turns[i]?.runId);

  before(async () => {
    const stack = await testStack();
    const config = stack.config({ TEMPORAL_TASK_QUEUE: `runs-list-${randomUUID()}` });
    worker = await startWorker({ config, model });
    gateway = await startGateway({ config });
    idleGateway = await startGateway({
      config: stack.config({ TEMPORAL_TASK_QUEUE: `idle-${randomUUID()}` }),
    });
    owner = await createTestUser();
    stranger = await createTestUser();
    const bodies: Record<string, unknown>[] = [
      { text: 'one', metadata: { customer: tag, tier: 'gold' } },
      { text: 'two', metadata: { customer: tag } },
      { text: 'three', metadata: { customer: 'other' } },
      { text: 'four' },
    ];
    for (const [i, body] of bodies.entries()) {
      const chatId = i === 1 ? turns[0]?.chatId : undefined;
      const res = await sendVia(gateway.url, owner, { ...body, ...(chatId ? { chatId } : {}) });
      assert.equal(res.status, 202, await res.clone().text());
      const turn = (await res.json()) as Turn;
      turns.push(turn);
      await completed(turn);
    }
    const res = await sendVia(idleGateway.url, owner, { text: 'five', metadata: { customer: tag } });
    assert.equal(res.status, 202);
    turns.push((await res.json()) as Turn);
  });
  after(async () => {
    await gateway.close();
    await idleGateway.close();
    await worker.stop();
  });

  it("lists the user's runs over all chats newest first, page by page, each once", async () => {
    const first = await list('/api/v1/runs');
    assert.deepEqual(
      first.data.map((r) => r.id),
      ids(4, 3, 2, 1, 0),
    );
    assert.equal(first.nextCursor, null);
    assert.deepEqual(first.data[4]?.metadata, { customer: tag, tier: 'gold' });
    assert.deepEqual(first.data[1]?.metadata, {});
    assert.equal(first.data[0]?.status, 'QUEUED');
    // Pages of two: 2 + 2 + 1; and a page size equal to the total is one page, no cursor.
    assert.deepEqual(await all('/api/v1/runs', 2), { ids: ids(4, 3, 2, 1, 0), pages: 3 });
    assert.deepEqual(await all('/api/v1/runs', 5), { ids: ids(4, 3, 2, 1, 0), pages: 1 });
    assert.deepEqual(await all('/api/v1/runs', 1), { ids: ids(4, 3, 2, 1, 0), pages: 5 });
    assert.deepEqual((await list('/api/v1/runs', stranger)).data, []);
  });

  it('filters by status, one or several, at the edges of its pages', async () => {
    assert.deepEqual(
      (await list('/api/v1/runs?status=QUEUED')).data.map((r) => r.id),
      ids(4),
    );
    assert.deepEqual(await all('/api/v1/runs?status=COMPLETE', 1), { ids: ids(3, 2, 1, 0), pages: 4 });
    assert.deepEqual(await all('/api/v1/runs?status=COMPLETE,QUEUED', 2), {
      ids: ids(4, 3, 2, 1, 0),
      pages: 3,
    });
    assert.deepEqual((await list('/api/v1/runs?status=FAILED,CANCELLED')).data, []);
  });

  it('filters by metadata pairs, every pair must match, with status and cursor', async () => {
    const customer = `metadata[customer]=${encodeURIComponent(tag)}`;
    assert.deepEqual(await all(`/api/v1/runs?${customer}`, 1), { ids: ids(4, 1, 0), pages: 3 });
    assert.deepEqual(
      (await list(`/api/v1/runs?${customer}&metadata[tier]=gold`)).data.map((r) => r.id),
      ids(0),
    );
    assert.deepEqual(
      (await list(`/api/v1/runs?${customer}&status=COMPLETE`)).data.map((r) => r.id),
      ids(1, 0),
    );
    assert.deepEqual((await list(`/api/v1/runs?${customer}&metadata[tier]=silver`)).data, []);
    // A pair is the user's own: another user's runs with the same pair are not theirs.
    assert.deepEqual((await list(`/api/v1/runs?${customer}`, stranger)).data, []);
  });

  it('filters by time: since is inclusive, until exclusive', async () => {
    const third = (await list('/api/v1/runs')).data.find((r) => r.id === turns[2]?.runId);
    const at = encodeURIComponent(third?.createdAt as string);
    assert.deepEqual(
      (await list(`/api/v1/runs?since=${at}`)).data.map((r) => r.id),
      ids(4, 3, 2),
    );
    assert.deepEqual(
      (await list(`/api/v1/runs?until=${at}`)).data.map((r) => r.id),
      ids(1, 0),
    );
    assert.deepEqual((await list(`/api/v1/runs?since=${at}&until=${at}`)).data, []);
  });

  it("lists a chat's runs, filtered the same way; another user's chat is 404", async () => {
    const chat = turns[0]?.chatId as string;
    assert.deepEqual(await all(`/api/v1/chats/${chat}/runs`, 1), { ids: ids(1, 0), pages: 2 });
    assert.deepEqual(
      (await list(`/api/v1/chats/${chat}/runs?metadata[tier]=gold`)).data.map((r) => r.id),
      ids(0),
    );
    assert.deepEqual((await list(`/api/v1/chats/${chat}/runs?status=QUEUED`)).data, []);
    for (const path of [`/api/v1/chats/${chat}/runs`, `/api/v1/chats/${randomUUID()}/runs`]) {
      const res = await get(path, stranger);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
    }
  });

  it('answers bad list input with a 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['status=DONE', 'query.status'],
      ['status=COMPLETE,', 'query.status'],
      ['since=yesterday', 'query.since'],
      ['since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z', 'query.until'],
      ['limit=0', 'query.limit'],
      ['limit=51', 'query.limit'],
      ['cursor=not-a-cursor', 'query.cursor'],
      [`metadata[${'k'.repeat(41)}]=v`, 'query.metadata'],
    ];
    for (const [query, field] of cases) {
      for (const path of ['/api/v1/runs', `/api/v1/chats/${turns[0]?.chatId}/runs`]) {
        const res = await get(`${path}?${query}`);
        assert.equal(res.status, 400, `${path}?${query}`);
        const body = (await res.json()) as { code: string; details: { path: string }[] };
        assert.equal(body.code, 'INVALID_REQUEST');
        assert.ok(
          body.details.some((d) => d.path.startsWith(field)),
          `${query}: ${JSON.stringify(body.details)}`,
        );
      }
    }
  });

  it('shows the metadata in the snapshot and sets it as the AgentRunMetadata search attribute', async () => {
    const snapshotOf = async (turn: Turn) =>
      (await (await get(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`)).json()) as {
        metadata: Record<string, string>;
        triggerRunId: string;
      };
    const first = await snapshotOf(turns[0] as Turn);
    assert.deepEqual(first.metadata, { customer: tag, tier: 'gold' });
    const { temporal } = await testStack();
    const execution = temporal.client.workflow.getHandle(
      agentWorkflowId(turns[0]?.chatId as string),
      first.triggerRunId,
    );
    assert.deepEqual((await execution.describe()).typedSearchAttributes.get(runMetadataSearchAttribute), [
      `customer=${tag}`,
      'tier=gold',
    ]);
    // What an operator types in the Temporal UI finds the executions of the runs carrying the pair.
    // The QUEUED run's execution is started (on a queue no worker polls) but has not said so yet.
    const queued = await temporal.client.workflow
      .getHandle(agentWorkflowId(turns[4]?.chatId as string))
      .describe();
    const expected = [
      ...(await Promise.all([0, 1].map(async (i) => (await snapshotOf(turns[i] as Turn)).triggerRunId))),
      queued.runId,
    ].sort();
    const found = await waitFor(
      async () => {
        const executions: string[] = [];
        for await (const e of temporal.client.workflow.list({
          query: `AgentRunMetadata = 'customer=${tag}'`,
        }))
          executions.push(e.runId);
        return executions.length >= expected.length ? executions.sort() : undefined;
      },
      { what: 'the visibility store to index the runs' },
    );
    assert.deepEqual(found, expected);
  });

  it('refuses bad metadata on a send with a 400 naming it, writing nothing', async () => {
    const user = await createTestUser();
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    const cases: [unknown, string][] = [
      [tooMany, 'body.metadata'],
      [{ 'a=b': 'v' }, 'body.metadata'],
      [{ ['k'.repeat(41)]: 'v' }, 'body.metadata'],
      [{ '': 'v' }, 'body.metadata'],
      [{ k: 'v'.repeat(513) }, 'body.metadata'],
      [{ k: 7 }, 'body.metadata'],
      [['a'], 'body.metadata'],
    ];
    for (const [metadata, field] of cases) {
      const res = await sendVia(gateway.url, user, { text: 'tagged', metadata });
      assert.equal(res.status, 400, JSON.stringify(metadata));
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.ok(
        body.details.some((d) => d.path.startsWith(field)),
        `${JSON.stringify(metadata)}: ${JSON.stringify(body.details)}`,
      );
    }
    // The form's metadata is JSON text, checked the same way.
    const form = new FormData();
    form.set('text', 'tagged');
    form.set('metadata', '{"customer":');
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: user.bearer,
      body: form,
    });
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(await res.json()), /body\.metadata/);
    // At the limits exactly: 16 pairs, a 40-character key, a 512-character value.
    const atLimits = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'v']));
    atLimits['k'.repeat(40)] = 'v'.repeat(512);
    const { db } = await testStack();
    const count = async () =>
      Number(
        (await db.pool.query(`SELECT count(*) FROM "Run" WHERE "userId" = $1`, [user.userId])).rows[0].count,
      );
    assert.equal(await count(), 0);
    const ok = await sendVia(idleGateway.url, user, { text: 'tagged', metadata: atLimits });
    assert.equal(ok.status, 202, await ok.clone().text());
    const turn = (await ok.json()) as Turn;
    const snapshot = (await (await get(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, user)).json()) as {
      metadata: Record<string, string>;
    };
    assert.deepEqual(snapshot.metadata, atLimits);
    // The form's metadata, as JSON text, lands the same.
    const good = new FormData();
    good.set('text', 'tagged by form');
    good.set('metadata', JSON.stringify({ customer: 'form' }));
    const formSend = await fetch(`${idleGateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: user.bearer,
      body: good,
    });
    assert.equal(formSend.status, 202, await formSend.clone().text());
    assert.deepEqual(
      (await list('/api/v1/runs?metadata[customer]=form', user)).data.map((r) => r.id),
      [((await formSend.json()) as Turn).runId],
    );
  });
});
