import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { claimKey } from '../../core/idempotency/store';
import { startReconciler } from '../../operations/runs';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { solidPng, startFakePredictionServer } from '../support/fake-providers';
import { waitFor } from '../support/wait';

type Prediction = Awaited<ReturnType<typeof startFakePredictionServer>>;

interface Answer {
  status: number;
  replayed: string | null;
  body: Record<string, unknown>;
}

async function answer(res: Response): Promise<Answer> {
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/**
 * Retries with the same Idempotency-Key, through two gateways over one database: gateway `a` waits
 * for a key's first request a long while, gateway `b` only briefly.
 */
describe('Idempotency-Key', function () {
  this.timeout(120_000);
  let storageDir: string;
  let prediction: Prediction;
  let worker: TestWorker;
  let a: TestGateway;
  let b: TestGateway;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    storageDir = await mkdtemp(path.join(tmpdir(), 'idempotency-test-'));
    prediction = await startFakePredictionServer({ pollsBeforeDone: 1 });
    const config = (wait: string) =>
      stack.config({
        TEMPORAL_TASK_QUEUE: `idempotency-${randomUUID()}`,
        STORAGE_LOCAL_DIR: storageDir,
        IMAGE_PROVIDER: 'prediction',
        PREDICTION_API_URL: prediction.url,
        PREDICTION_API_TOKEN: 'test-token',
        PROVIDER_POLL_INTERVAL: '50ms',
        IDEMPOTENCY_WAIT: wait,
      });
    const aConfig = config('60s');
    worker = await startWorker({ config: aConfig });
    a = await startGateway({ config: aConfig });
    b = await startGateway({
      config: { ...config('300ms'), TEMPORAL_TASK_QUEUE: aConfig.TEMPORAL_TASK_QUEUE },
    });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await worker?.stop();
    await prediction?.close();
    await rm(storageDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    user = await createTestUser();
  });

  const send = async (gw: TestGateway, body: unknown, key?: string, who: TestUser = user) =>
    answer(
      await fetch(`${gw.url}/api/v1/completions`, {
        method: 'POST',
        headers: {
          ...who.bearer,
          'content-type': 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
        body: JSON.stringify(body),
      }),
    );
  const tool = async (gw: TestGateway, body: unknown, key: string) =>
    answer(
      await fetch(`${gw.url}/api/v1/tools/ai_image_2`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      }),
    );
  const upload = async (gw: TestGateway, files: Buffer[], key: string, chatId?: string) => {
    const form = new FormData();
    for (const f of files) form.append('file', new Blob([new Uint8Array(f)], { type: 'image/png' }), 'a.png');
    if (chatId) form.append('chatId', chatId);
    return answer(
      await fetch(`${gw.url}/api/v1/uploads`, {
        method: 'POST',
        headers: { ...user.bearer, 'idempotency-key': key },
        body: form,
      }),
    );
  };
  const count = async (
    table: 'Run' | 'Chat' | 'ToolCall' | 'CreditLedgerEntry' | 'Attachment',
    who = user,
  ) => {
    const { rows } = await a.deps.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${table}" WHERE "userId" = $1`,
      [who.userId],
    );
    return Number(rows[0]?.n);
  };

  it('replays a send retried on another gateway: one chat, one run, the same ids', async () => {
    const key = randomUUID();
    const first = await send(a, { text: 'hello once' }, key);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.replayed, null);
    const retry = await send(b, { text: 'hello once' }, key);
    assert.equal(retry.status, 202);
    assert.equal(retry.replayed, 'true');
    assert.deepEqual(retry.body, first.body);
    assert.equal(await count('Chat'), 1);
    assert.equal(await count('Run'), 1);
  });

  it('reads the same request whatever the order of its members or its defaults', async () => {
    const key = randomUUID();
    const first = await send(a, { text: 'same', planMode: false }, key);
    const retry = await send(b, { planMode: false, image_urls: [], text: 'same' }, key);
    assert.equal(retry.replayed, 'true');
    assert.deepEqual(retry.body, first.body);
  });

  it('takes every key the documented pattern takes: `""` is a key of two quotes, not an empty one', async () => {
    const first = await send(a, { text: 'two quotes' }, '""');
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.replayed, null);
    const retry = await send(b, { text: 'two quotes' }, '""');
    assert.equal(retry.replayed, 'true');
    assert.deepEqual(retry.body, first.body);
  });

  it('refuses the key with another request, and writes nothing', async () => {
    const key = randomUUID();
    await send(a, { text: 'first request' }, key);
    const other = await send(b, { text: 'another request' }, key);
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
    const otherRoute = await upload(a, [await solidPng(4, 4, { r: 1, g: 2, b: 3 })], key);
    assert.equal(otherRoute.status, 422);
    assert.equal(otherRoute.body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await count('Run'), 1);
    assert.equal(await count('Attachment'), 0);
  });

  it("keeps keys per user: another user's same key and body is a request of its own", async () => {
    const key = randomUUID();
    const mine = await send(a, { text: 'shared words' }, key);
    const other = await createTestUser();
    const theirs = await send(a, { text: 'shared words' }, key, other);
    assert.equal(theirs.status, 202);
    assert.equal(theirs.replayed, null);
    assert.notEqual(theirs.body.chatId, mine.body.chatId);
    assert.equal(await count('Run', other), 1);
  });

  it('refuses a malformed key before doing anything', async () => {
    const tooLong = await send(a, { text: 'x' }, 'k'.repeat(256));
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.code, 'INVALID_REQUEST');
    assert.match(JSON.stringify(tooLong.body.details), /headers\.idempotency-key/);
    assert.equal(await count('Run'), 0);
  });

  it("reads the IETF draft's quoted key as the same key", async () => {
    const first = await send(a, { text: 'quoted' }, '"abc-123"');
    const retry = await send(b, { text: 'quoted' }, 'abc-123');
    assert.equal(retry.replayed, 'true');
    assert.deepEqual(retry.body, first.body);
  });

  it('replays a stored refusal; an answer that says "retry" (400, 409) leaves the key free', async () => {
    const missing = randomUUID();
    const key = randomUUID();
    const refused = await send(a, { text: 'to nowhere', chatId: missing }, key);
    assert.equal(refused.status, 404);
    const again = await send(b, { text: 'to nowhere', chatId: missing }, key);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'CHAT_NOT_FOUND');
    assert.equal(again.replayed, 'true');

    // No model is configured: the chat's first run fails at once. It is made active again by
    // hand, so that the next send is refused with 409, then ended, so that the retry is sent.
    const turn = await send(a, { text: 'keep busy' });
    const chatId = turn.body.chatId as string;
    await waitFor(
      async () => {
        const { rows } = await a.deps.db.pool.query<{ status: string }>(
          `SELECT status FROM "Run" WHERE "chatId" = $1`,
          [chatId],
        );
        return rows[0]?.status === 'FAILED' ? true : undefined;
      },
      { what: 'the first run to fail' },
    );
    const busyKey = randomUUID();
    await a.deps.db.pool.query(
      `UPDATE "Run" SET status = 'RUNNING', "finishedAt" = NULL WHERE "chatId" = $1`,
      [chatId],
    );
    const busy = await send(a, { text: 'next', chatId }, busyKey);
    assert.equal(busy.status, 409);
    assert.equal(busy.body.code, 'RUN_ACTIVE');
    await a.deps.db.pool.query(
      `UPDATE "Run" SET status = 'COMPLETE', "finishedAt" = now() WHERE "chatId" = $1`,
      [chatId],
    );
    const sent = await send(b, { text: 'next', chatId }, busyKey);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.equal(sent.replayed, null);
  });

  it('replays an upload, storing its files once', async () => {
    const key = randomUUID();
    const empty = await upload(a, [], key);
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'INVALID_REQUEST');
    const png = await solidPng(8, 8, { r: 200, g: 10, b: 10 });
    const first = await upload(a, [png], key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const retry = await upload(b, [png], key);
    assert.equal(retry.status, 201);
    assert.equal(retry.replayed, 'true');
    assert.deepEqual(retry.body, first.body);
    assert.equal(await count('Attachment'), 1);
    const otherBytes = await upload(b, [await solidPng(8, 8, { r: 10, g: 10, b: 200 })], key);
    assert.equal(otherBytes.status, 422);
    assert.equal(await count('Attachment'), 1);
  });

  it('runs and charges a tool call once: a retry waits for it, or is told it is still running', async () => {
    const key = randomUUID();
    const body = { prompt: `a lighthouse ${key}` };
    prediction.hold();
    const first = tool(a, body, key);
    await waitFor(async () => ((await count('ToolCall')) === 1 ? true : undefined), {
      what: 'the tool call',
    });

    const impatient = await tool(b, body, key);
    assert.equal(impatient.status, 409);
    assert.equal(impatient.body.code, 'IDEMPOTENCY_IN_PROGRESS');

    const patient = tool(a, body, key);
    prediction.release();
    const [done, waited] = await Promise.all([first, patient]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(waited.status, 200);
    assert.equal(waited.replayed, 'true');
    assert.deepEqual(waited.body, done.body);

    const later = await tool(b, body, key);
    assert.equal(later.replayed, 'true');
    assert.deepEqual(later.body, done.body);
    assert.equal(prediction.created.filter((c) => JSON.stringify(c.body).includes(key)).length, 1);
    assert.equal(await count('ToolCall'), 1);
    assert.equal(await count('CreditLedgerEntry'), 1);
  });

  /** A claim of a fresh key for a send, by a new holder, with a minute's lease. */
  const sendTurnClaim = () => ({
    userId: user.userId,
    key: randomUUID(),
    operation: 'sendTurn',
    fingerprint: 'f',
    owner: randomUUID(),
    leaseMs: 60_000,
  });

  it("names a key's use: a fresh claim is a new use, a dead holder's taken over is the same use, resumed", async () => {
    const { db } = await testStack();
    const claim = sendTurnClaim();
    const fresh = await claimKey(db.pool, claim);
    assert.ok(fresh && 'since' in fresh);
    assert.equal(fresh.resumed, false);
    await db.pool.query(
      `UPDATE "IdempotencyKey" SET "lockedUntil" = now() - interval '1 second' WHERE "userId" = $1 AND key = $2`,
      [user.userId, claim.key],
    );
    const taken = await claimKey(db.pool, { ...claim, owner: randomUUID() });
    assert.ok(taken && 'since' in taken);
    assert.equal(taken.resumed, true);
    assert.equal(taken.since.getTime(), fresh.since.getTime());
  });

  it('tells a takeover from a new use even within the millisecond of the first claim', async () => {
    const { db } = await testStack();
    const claim = sendTurnClaim();
    // One transaction: every statement's now() is the same instant, as it can be on a quick machine.
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const pool = client as unknown as Parameters<typeof claimKey>[0];
      const fresh = await claimKey(pool, claim);
      assert.ok(fresh && 'since' in fresh);
      assert.equal(fresh.resumed, false);
      await client.query(
        `UPDATE "IdempotencyKey" SET "lockedUntil" = now() - interval '1 second' WHERE "userId" = $1 AND key = $2`,
        [user.userId, claim.key],
      );
      const taken = await claimKey(pool, { ...claim, owner: randomUUID() });
      assert.ok(taken && 'since' in taken);
      assert.equal(taken.resumed, true);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('admits a send once when its first gateway died after admitting it, before storing the answer', async () => {
    const key = randomUUID();
    const body = { text: `hello ${key}` };
    const first = await send(a, body, key);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    // As the key stands when the gateway dies between the turn's commit and the answer's.
    const { db } = await testStack();
    await db.pool.query(
      `UPDATE "IdempotencyKey" SET outcome = NULL, "lockedUntil" = now() - interval '1 second'
        WHERE "userId" = $1 AND key = $2`,
      [user.userId, key],
    );
    const retry = await send(b, body, key);
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal(retry.body.runId, first.body.runId);
    assert.equal(retry.body.chatId, first.body.chatId);
    assert.equal(retry.body.messageId, first.body.messageId);
    assert.equal(await count('Run'), 1);
    assert.equal(await count('Chat'), 1);
  });

  it('charges a tool call once when its first gateway died before storing the answer', async () => {
    const key = randomUUID();
    const body = { prompt: `a harbour ${key}` };
    prediction.hold();
    const first = tool(a, body, key);
    await waitFor(async () => ((await count('ToolCall')) === 1 ? true : undefined), {
      what: 'the tool call',
    });
    // The first request's gateway is gone as far as the key can tell: its lease has run out.
    const { db } = await testStack();
    await db.pool.query(
      `UPDATE "IdempotencyKey" SET "lockedUntil" = now() - interval '1 second' WHERE "userId" = $1 AND key = $2`,
      [user.userId, key],
    );
    const retry = tool(b, body, key);
    await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ owners: string }>(
          `SELECT count(*)::text AS owners FROM "IdempotencyKey" WHERE "userId" = $1 AND key = $2 AND "lockedUntil" > now()`,
          [user.userId, key],
        );
        return rows[0]?.owners === '1' ? true : undefined;
      },
      { what: 'the retry taking the key over' },
    );
    prediction.release();
    const [done, again] = await Promise.all([first, retry]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body, done.body);
    assert.equal(prediction.created.filter((c) => JSON.stringify(c.body).includes(key)).length, 1);
    assert.equal(await count('ToolCall'), 1);
    assert.equal(await count('CreditLedgerEntry'), 1);
  });

  it('forgets a key after 24 hours (the reconciler deletes it)', async () => {
    const key = randomUUID();
    await send(a, { text: 'long ago' }, key);
    await a.deps.db.pool.query(
      `UPDATE "IdempotencyKey" SET "createdAt" = now() - interval '25 hours' WHERE "userId" = $1`,
      [user.userId],
    );
    const reconciler = startReconciler(a.deps, 3_600_000);
    try {
      const pass = await waitFor(() => reconciler.pass().then((p) => p ?? undefined), { what: 'a pass' });
      assert.ok(pass.retention.idempotencyKeys >= 1);
    } finally {
      await reconciler.stop();
    }
    const { rows } = await a.deps.db.pool.query(`SELECT 1 FROM "IdempotencyKey" WHERE "userId" = $1`, [
      user.userId,
    ]);
    assert.equal(rows.length, 0);
    const fresh = await send(b, { text: 'a new request' }, key);
    assert.equal(fresh.status, 202);
    assert.equal(fresh.replayed, null);
  });
});
