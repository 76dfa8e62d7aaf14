import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Config } from '../../core/config/config';
import { createTemporalClient } from '../../core/temporal/connection';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

/**
 * A poll costs one indexed read: however many clients poll a live run, through however many
 * gateways, its workflow is asked at most once a second, and a poll that finds nothing changed
 * answers 304.
 */
describe('polling a run', function () {
  this.timeout(60_000);
  const gateways: TestGateway[] = [];
  let worker: TestWorker;
  const queries: string[] = [];
  const model = new ScriptedModel([]);
  let config: Config;

  before(async () => {
    const stack = await testStack();
    // Polling as fast as it can for seconds is the point here, not the API's rate limit.
    config = stack.config({
      TEMPORAL_TASK_QUEUE: `polls-${randomUUID()}`,
      API_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    worker = await startWorker({ config, deps: { model } });
    // Two gateways, each with a Temporal client counting the queries it sends.
    for (let i = 0; i < 2; i++) {
      const temporal = createTemporalClient({
        address: stack.temporalAddress,
        namespace: config.TEMPORAL_NAMESPACE,
      });
      const getHandle = temporal.client.workflow.getHandle.bind(temporal.client.workflow);
      temporal.client.workflow.getHandle = ((...args: Parameters<Client['workflow']['getHandle']>) => {
        const handle = getHandle(...args);
        const query = handle.query.bind(handle);
        handle.query = ((...q: Parameters<typeof query>) => {
          queries.push(args[0]);
          return query(...q);
        }) as typeof query;
        return handle;
      }) as typeof temporal.client.workflow.getHandle;
      gateways.push(await startGateway({ config, deps: { temporal } }));
    }
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await worker.stop();
  });

  it('never asks the workflow: polls over two gateways read the tables, and answer 304 while nothing changes', async () => {
    const user = await createTestUser();
    const { path } = await heldToolTurn(user);
    let next = 0;
    // Each poll goes to the other gateway than the one before.
    const poll = (headers: Record<string, string> = {}) =>
      fetch(`${gateways[next++ % gateways.length]!.url}${path}`, { headers: { ...user.bearer, ...headers } });
    const first = await waitFor(async () => {
      const res = await poll();
      const body = (await res.json()) as { status: string; text: string; activity: string | null };
      return body.status === 'RUNNING' && body.text.includes('A long') ? { res, body } : undefined;
    });
    assert.equal(first.body.activity, 'model step 2');
    const etag = first.res.headers.get('etag');
    assert.ok(etag, 'a snapshot carries an ETag');

    // Polls for three seconds, ten at a time, alternating gateways, past every memory's second.
    queries.splice(0);
    const started = Date.now();
    const answers: Response[] = [];
    while (Date.now() - started < 3_000) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, () => poll({ 'if-none-match': etag })))));
    }
    assert.deepEqual(queries, [], `queries for ${answers.length} polls`);
    assert.ok(
      answers.every((r) => r.status === 304),
      `statuses: ${[...new Set(answers.map((r) => r.status))].join(', ')}`,
    );

    model.release();
    const done = await waitFor(async () => {
      const res = await poll({ 'if-none-match': etag });
      if (res.status === 304) return undefined;
      const body = (await res.json()) as { status: string };
      return body.status === 'COMPLETE' ? res : undefined;
    });
    assert.equal(done.status, 200, 'a changed run answers in full');
  });

  it('shows a model step from its start, before it has written any text', async () => {
    const user = await createTestUser();
    model.replies.push(
      { text: 'Drawing.', toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }] },
      { text: 'The cat, drawn.', toolCalls: [] },
    );
    model.holdAtStart(1);
    const { path } = await sendTurn(user, { text: 'hello' });
    const snapshot = async () =>
      (await (await fetch(`${gateways[0]!.url}${path}`, { headers: user.bearer })).json()) as {
        status: string;
        text: string;
        activity: string | null;
        currentStep: number;
        toolCalls: { status: string }[];
      };
    // The second step holds before its first word: only its start has written anything.
    const shown = await waitFor(async () => {
      const s = await snapshot();
      return s.currentStep === 2 ? s : undefined;
    });
    assert.equal(shown.status, 'RUNNING');
    assert.equal(shown.activity, 'model step 2');
    model.release();
    assert.equal(shown.text, 'Drawing.');
    assert.equal(shown.toolCalls.length, 1);
    assert.notEqual(shown.toolCalls[0]?.status, 'RUNNING');
    assert.deepEqual(queries, []);
    await waitFor(async () => ((await snapshot()).status === 'COMPLETE' ? true : undefined));
  });

  it('never asks the workflow of a plain turn in its model step, nor of a run waiting on its plan', async () => {
    const user = await createTestUser();
    model.replies.push({ text: 'A long answer, streamed in two halves.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const send = async (body: Record<string, unknown>) => (await sendTurn(user, body)).path;
    const watch = async (
      path: string,
      until: (s: { status: string; activity: string | null }) => boolean,
    ) => {
      const snapshot = await waitFor(async () => {
        const body = (await (await fetch(`${gateways[0]!.url}${path}`, { headers: user.bearer })).json()) as {
          status: string;
          activity: string | null;
          currentStep: number;
        };
        return until(body) ? body : undefined;
      });
      // Polls through both gateways for over a second, past every memory's second.
      queries.splice(0);
      const started = Date.now();
      while (Date.now() - started < 1_200)
        for (const gateway of gateways) {
          const body = (await (await fetch(`${gateway.url}${path}`, { headers: user.bearer })).json()) as {
            activity: string | null;
          };
          assert.equal(body.activity, snapshot.activity);
        }
      assert.deepEqual(queries, []);
      return snapshot;
    };
    const plain = await send({ text: 'hello' });
    const running = await watch(plain, (s) => s.status === 'RUNNING');
    assert.equal(running.activity, 'model step 1');
    assert.equal(running.currentStep, 1);
    model.release();

    model.replies.push({
      text: 'The plan.',
      toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
    });
    const planned = await send({ text: 'draw', planMode: true });
    const waiting = await watch(planned, (s) => s.status === 'WAITING');
    assert.equal(waiting.activity, 'waiting for plan approval');
    assert.equal(waiting.currentStep, 1);
  });

  /** Sends a turn through the first gateway: its ids and its snapshot's path. */
  async function sendTurn(
    user: { bearer: Record<string, string> },
    body: Record<string, unknown>,
    via = gateways[0] as TestGateway,
  ) {
    const sent = await fetch(`${via.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });
    const turn = (await sent.json()) as { chatId: string; runId: string };
    return { ...turn, path: `/api/v1/chats/${turn.chatId}/runs/${turn.runId}` };
  }

  /** A tool turn (ai_image_2) whose second model step holds after the first half of its text. */
  async function heldToolTurn(user: { bearer: Record<string, string> }) {
    model.replies.push(
      { text: 'Drawing.', toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }] },
      { text: 'A long answer, streamed in two halves.', toolCalls: [] },
    );
    model.holdAfterFirstHalf(1);
    return sendTurn(user, { text: 'hello' });
  }

  /**
   * Sends a turn and waits for it to complete, both through `via`: a gateway of a lower rate limit
   * is used alone, as the first one's checks lease points of the key's counter by its own limit (a
   * million).
   */
  async function completedTurn(user: { bearer: Record<string, string> }, via = gateways[0] as TestGateway) {
    const turn = await sendTurn(user, { text: 'hello' }, via);
    await waitFor(async () => {
      const res = await fetch(`${via.url}${turn.path}`, { headers: user.bearer });
      return ((await res.json()) as { status: string }).status === 'COMPLETE' ? true : undefined;
    });
    return turn;
  }

  /** Two more gateways, of `perMinute` public calls per user. */
  async function gatewaysLimitedTo(perMinute: number): Promise<[TestGateway, TestGateway]> {
    return [await gatewayLimitedTo(perMinute), await gatewayLimitedTo(perMinute)];
  }

  function gatewayLimitedTo(perMinute: number): Promise<TestGateway> {
    return startGateway({ config: { ...config, API_RATE_LIMIT_PER_MINUTE: perMinute } });
  }

  /**
   * Polls `path` on `gateway` with the user's key until the gateway remembers the key (it does once
   * it listens for revocations, from its first call on); answers the last poll.
   */
  function polledUntilRemembered(
    gateway: TestGateway,
    user: { apiKey: string; bearer: Record<string, string> },
    path: string,
  ) {
    return waitFor(
      async () => {
        const res = await fetch(`${gateway.url}${path}`, { headers: user.bearer });
        assert.equal(res.status, 200);
        return gateway.ops.identity.rememberedCaller(user.apiKey, 'rest') ? res : undefined;
      },
      { what: 'the key remembered' },
    );
  }

  it('answers a conditional poll of an unchanged run from memory, without counting it against the key', async () => {
    const limited = await startGateway({ config: { ...config, API_RATE_LIMIT_PER_MINUTE: 60 } });
    try {
      const user = await createTestUser();
      const { path } = await completedTurn(user, limited);
      // The key's count is shared by every gateway: the turn above used some of it.
      const remaining = (res: Response) => Number(res.headers.get('ratelimit-remaining'));
      const full = await fetch(`${limited.url}${path}`, { headers: user.bearer });
      assert.equal(full.status, 200);
      const left = remaining(full);
      assert.ok(left > 2, `${left} left`);
      const etag = full.headers.get('etag') as string;
      // More conditional polls than the key has calls left: each told 304. One answered from
      // memory carries no RateLimit headers and is not counted; one that read (the gateway's
      // first, before it listened, and one a second after, when the answer it remembers expires)
      // says so and is.
      let counted = 0;
      for (let i = 0; i < left + 10; i++) {
        const res = await fetch(`${limited.url}${path}`, {
          headers: { ...user.bearer, 'if-none-match': etag },
        });
        assert.equal(res.status, 304, `poll ${i}`);
        assert.equal(res.headers.get('etag'), etag);
        if (res.headers.has('ratelimit-remaining')) counted++;
      }
      assert.ok(counted <= (left + 10) / 4, `${counted} of ${left + 10} polls read`);
      const after = await fetch(`${limited.url}${path}`, { headers: user.bearer });
      assert.equal(after.status, 200);
      assert.equal(remaining(after), left - 1 - counted);
      // A poll without the ETag, or with another, is an ordinary call.
      const other = await fetch(`${limited.url}${path}`, {
        headers: { ...user.bearer, 'if-none-match': 'W/"x"' },
      });
      assert.equal(other.status, 200);
      assert.equal(remaining(other), left - 2 - counted);
    } finally {
      await limited.close();
    }
  });

  it('reads a poll of a remembered key beside its check, and answers the check refusing it: 429, 401', async () => {
    const limited = await startGateway({ config: { ...config, API_RATE_LIMIT_PER_MINUTE: 60 } });
    try {
      const user = await createTestUser();
      const { path, chatId } = await completedTurn(user, limited);
      const first = await polledUntilRemembered(limited, user, path);
      // Spend what is left of the minute: the poll past it is refused, with its headers, although
      // its read had begun; and so is one of a run that does not exist (429, not 404).
      let last = first;
      for (let left = Number(first.headers.get('ratelimit-remaining')); left >= 0; left--) {
        last = await fetch(`${limited.url}${path}`, { headers: user.bearer });
      }
      assert.equal(last.status, 429);
      assert.equal(((await last.json()) as { code: string }).code, 'RATE_LIMITED');
      assert.equal(last.headers.get('ratelimit-remaining'), '0');
      assert.equal(last.headers.get('etag'), null, 'nothing of the snapshot');
      const missing = await fetch(`${limited.url}/api/v1/chats/${chatId}/runs/${randomUUID()}`, {
        headers: user.bearer,
      });
      assert.equal(missing.status, 429);

      // Revoked behind the gateway's back (no notification reaches it: triggers off for that
      // statement), so the gateway still remembers the key: the database's check has the word.
      const other = await createTestUser();
      const turn = await completedTurn(other, limited);
      assert.equal((await fetch(`${limited.url}${turn.path}`, { headers: other.bearer })).status, 200);
      const client = await (await testStack()).db.pool.connect();
      try {
        await client.query(`SET session_replication_role = replica`);
        await client.query(`UPDATE "ApiKey" SET "revokedAt" = now() WHERE id = $1`, [other.apiKeyId]);
        await client.query(`RESET session_replication_role`);
      } finally {
        client.release();
      }
      assert.ok(limited.ops.identity.rememberedCaller(other.apiKey, 'rest'), 'still remembered');
      const revoked = await fetch(`${limited.url}${turn.path}`, { headers: other.bearer });
      assert.equal(revoked.status, 401);
      assert.equal(((await revoked.json()) as { code: string }).code, 'UNAUTHORIZED');
    } finally {
      await limited.close();
    }
  });

  it("counts a remembered key's polls a lease at a time: the limit exact on one gateway, held over two", async () => {
    // A limit of 500 a minute: each check in PostgreSQL takes 5 points, the poll's and 4 for later.
    const [one, two] = await gatewaysLimitedTo(500);
    try {
      const { db } = await testStack();
      const user = await createTestUser();
      const { path } = await completedTurn(user, one);
      const counted = async () => {
        const { rows } = await db.pool.query<{ points: number }>(
          `SELECT points FROM "RateLimit" WHERE key = $1`,
          [`api:${user.userId}`],
        );
        return rows[0]?.points ?? 0;
      };
      const poll = (gateway: TestGateway) => fetch(`${gateway.url}${path}`, { headers: user.bearer });
      const remaining = (res: Response) => Number(res.headers.get('ratelimit-remaining'));
      // One gateway: every call is counted, one point off the headers each time, polls and the
      // other calls between them alike; yet the database is asked for points once per lease, and
      // is never more than a lease ahead of the calls.
      let left = remaining(await polledUntilRemembered(one, user, path));
      const points = new Set<number>([await counted()]);
      for (let i = 0; i < 24; i++) {
        const res =
          i % 4 === 3 ? await fetch(`${one.url}/api/v1/chats`, { headers: user.bearer }) : await poll(one);
        assert.equal(res.status, 200, `call ${i}`);
        assert.equal(remaining(res), --left, `call ${i}`);
        const now = await counted();
        assert.ok(now - (500 - left) >= 0 && now - (500 - left) < 5, `counter ${now}, ${500 - left} calls`);
        points.add(now);
      }
      assert.ok(points.size <= 6, `${points.size - 1} leases for 24 calls`);
      // Every point left is served, and not one more: the call past the limit is refused.
      while (left > 0) {
        const res = await poll(one);
        assert.equal(res.status, 200, `${left} left`);
        assert.equal(remaining(res), --left);
      }
      const refused = await poll(one);
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as { code: string }).code, 'RATE_LIMITED');

      // Two gateways sharing a key: what each has leased and not spent is lost to the caller when
      // the minute ends, never given twice. Every call answered counts against the 500.
      const other = await createTestUser();
      const second = await completedTurn(other, one);
      const pollOther = (gateway: TestGateway) =>
        fetch(`${gateway.url}${second.path}`, { headers: other.bearer });
      let served = 0;
      for (const gateway of [one, two]) await polledUntilRemembered(gateway, other, second.path);
      const before = 500 - remaining(await pollOther(one));
      for (let open = [one, two]; open.length;) {
        const next: TestGateway[] = [];
        for (const gateway of open) {
          const res = await pollOther(gateway);
          if (res.status === 200) {
            served++;
            next.push(gateway);
          } else assert.equal(res.status, 429);
        }
        open = next;
      }
      assert.ok(before + served <= 500, `${before} + ${served} calls answered`);
      assert.ok(before + served >= 500 - 2 * 4, `${before} + ${served} calls answered`);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('takes one lease between the calls that find no point left at the same moment', async () => {
    const one = await gatewayLimitedTo(500);
    try {
      const { db } = await testStack();
      const user = await createTestUser();
      const { path } = await completedTurn(user, one);
      await polledUntilRemembered(one, user, path);
      const poll = () => fetch(`${one.url}${path}`, { headers: user.bearer });
      // On one gateway the points are handed out in order: this call's is the count so far.
      const calls = 500 - Number((await poll()).headers.get('ratelimit-remaining'));
      // Twenty calls at once, as many polls arriving together would be: the first find what is
      // left of the lease, the rest a check each, all under way at the same moment.
      const api = [one.ops.limits.api];
      const burst = await Promise.all(
        Array.from({ length: 20 }, () => one.ops.identity.authenticateApiKey(user.apiKey, api, 'rest')),
      );
      for (const { caller } of burst) assert.equal(caller.userId, user.userId);
      const { rows } = await db.pool.query<{ points: number }>(
        `SELECT points FROM "RateLimit" WHERE key = $1`,
        [`api:${user.userId}`],
      );
      // The checks beside the one taking a lease take their own point only: what the counter holds
      // beyond the calls is that one lease's rest (4), not a lease per check.
      const unspent = (rows[0]?.points ?? 0) - (calls + 20);
      assert.ok(unspent >= 0 && unspent <= 4, `${unspent} points taken and not spent`);
    } finally {
      await one.close();
    }
  });

  it('stops answering a leased key on every gateway once it is revoked through any', async () => {
    const [one, two] = await gatewaysLimitedTo(500);
    try {
      const user = await createTestUser();
      const { path } = await completedTurn(user, one);
      const poll = () => fetch(`${one.url}${path}`, { headers: user.bearer });
      await polledUntilRemembered(one, user, path);
      // A check took a lease: the next polls are answered without asking the database.
      assert.equal((await poll()).status, 200);
      assert.ok(one.ops.identity.leasedCaller(user.apiKey, [one.ops.limits.api], 'rest'), 'a lease left');

      const revoked = await fetch(`${two.url}/api/keys/${user.apiKeyId}`, {
        method: 'DELETE',
        headers: { cookie: user.cookie },
      });
      assert.equal(revoked.status, 204);
      // The revocation's notification reaches the first gateway within milliseconds; from then on,
      // though points of its lease were left, it refuses the key.
      await waitFor(async () => (one.ops.identity.rememberedCaller(user.apiKey, 'rest') ? undefined : true), {
        timeoutMs: 2_000,
        intervalMs: 10,
        what: 'the first gateway to forget the revoked key',
      });
      for (let i = 0; i < 5; i++) assert.equal((await poll()).status, 401);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('answers a poll without the ETag from memory too: the same answer, one read a second', async () => {
    const user = await createTestUser();
    const { path } = await completedTurn(user);
    const gateway = gateways[0] as TestGateway;
    const { pool } = gateway.deps.db;
    const query = pool.query.bind(pool);
    let reads = 0;
    pool.query = ((...args: Parameters<typeof query>) => {
      if ((args[0] as { name?: string }).name === 'run-snapshot') reads++;
      return query(...args);
    }) as typeof pool.query;
    try {
      const poll = async () => {
        const res = await fetch(`${gateway.url}${path}`, { headers: user.bearer });
        assert.equal(res.status, 200);
        return { etag: res.headers.get('etag'), body: await res.text() };
      };
      // The gateway remembers an answer once it listens for changes (from its first read on).
      const first = await waitFor(
        async () => {
          const before = reads;
          const answer = await poll();
          return reads === before ? answer : undefined;
        },
        { what: 'a poll answered from memory' },
      );
      reads = 0;
      const started = Date.now();
      for (let i = 0; i < 20; i++) assert.deepEqual(await poll(), first, `poll ${i}`);
      const seconds = Math.ceil((Date.now() - started) / 1000);
      assert.ok(reads <= seconds, `${reads} reads for 20 polls in ${seconds} s`);
    } finally {
      pool.query = query as typeof pool.query;
    }
  });

  it('answers in full as soon as the run changes, on every gateway', async () => {
    const user = await createTestUser();
    const { runId, path } = await completedTurn(user);
    const { db } = await testStack();
    for (const gateway of gateways) {
      const etag = (await fetch(`${gateway.url}${path}`, { headers: user.bearer })).headers.get(
        'etag',
      ) as string;
      const conditional = () =>
        fetch(`${gateway.url}${path}`, { headers: { ...user.bearer, 'if-none-match': etag } });
      assert.equal((await conditional()).status, 304);
      // Written behind the gateway's back, as the worker writes: the run_events trigger announces
      // it. A gateway missing the notification would go on answering 304 for the rest of the
      // second it remembers an answer; the change must show well within it.
      await db.pool.query(`UPDATE "Run" SET text = text || '!' WHERE id = $1`, [runId]);
      const changed = await waitFor(
        async () => {
          const res = await conditional();
          return res.status === 304 ? undefined : res;
        },
        { timeoutMs: 500, intervalMs: 10, what: 'the change to show' },
      );
      assert.equal(changed.status, 200);
      assert.match(((await changed.json()) as { text: string }).text, /!$/);
      // A poll without the ETag, answered from memory while nothing changed, shows a change as soon.
      const full = () => fetch(`${gateway.url}${path}`, { headers: user.bearer });
      const seen = (await (await full()).json()) as { text: string };
      await db.pool.query(`UPDATE "Run" SET text = text || '?' WHERE id = $1`, [runId]);
      await waitFor(
        async () =>
          ((await (await full()).json()) as { text: string }).text === `${seen.text}?` ? true : undefined,
        { timeoutMs: 500, intervalMs: 10, what: 'the change to show in full' },
      );
    }
  });

  it('never answers from memory for another user, a deleted chat or a revoked key', async () => {
    const [gateway, twin] = gateways as [TestGateway, TestGateway];
    const user = await createTestUser();
    const stranger = await createTestUser();
    const { path } = await completedTurn(user);
    const remembered = async (on: TestGateway, who = user) => {
      const etag = (await fetch(`${on.url}${path}`, { headers: user.bearer })).headers.get('etag') as string;
      const res = await fetch(`${on.url}${path}`, { headers: { ...who.bearer, 'if-none-match': etag } });
      return res.status;
    };
    assert.equal(await remembered(gateway), 304);
    assert.equal(await remembered(gateway, stranger), 404);
    assert.equal((await fetch(`${gateway.url}${path}`, { headers: stranger.bearer })).status, 404);

    // Revoked through one gateway: that one refuses the key's very next poll, and the other
    // forgets the key when the notification comes, long before it would have on its own.
    assert.equal(await remembered(twin), 304);
    const keyId = user.apiKeyId;
    assert.equal(
      (
        await fetch(`${gateway.url}/api/keys/${keyId}`, {
          method: 'DELETE',
          headers: { cookie: user.cookie },
        })
      ).status,
      204,
    );
    const etag = 'W/"any"';
    assert.equal(
      (await fetch(`${gateway.url}${path}`, { headers: { ...user.bearer, 'if-none-match': etag } })).status,
      401,
    );
    await waitFor(async () => (twin.ops.identity.rememberedCaller(user.apiKey, 'rest') ? undefined : true), {
      timeoutMs: 2_000,
      what: 'the other gateway to forget the revoked key',
    });

    const owner = await createTestUser();
    const second = await completedTurn(owner);
    const ownerPath = second.path;
    const tag = (await fetch(`${gateway.url}${ownerPath}`, { headers: owner.bearer })).headers.get(
      'etag',
    ) as string;
    assert.equal(
      (
        await fetch(`${gateway.url}/api/v1/chats/${second.chatId}`, {
          method: 'DELETE',
          headers: owner.bearer,
        })
      ).status,
      204,
    );
    assert.equal(
      (await fetch(`${gateway.url}${ownerPath}`, { headers: { ...owner.bearer, 'if-none-match': tag } }))
        .status,
      404,
    );
    assert.equal((await fetch(`${gateway.url}${ownerPath}`, { headers: owner.bearer })).status, 404);
  });
});
