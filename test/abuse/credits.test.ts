/**
 * The credit balance and the cap on a user's running tool calls: a call is refused with 402 when
 * the balance cannot pay, a failed call costs nothing, a call is never charged twice, and a user
 * with every tool-call slot taken gets 429 while another user's call goes through.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createToolsActivities } from '../../activities/tools';
import type { ToolResult } from '../../core/schemas/events';
import { markToolCallFailed, openToolCall, readToolCall, recordToolSuccess } from '../../core/tools/calls';
import { createTestUser, type TestUser } from '../../testkit/users';
import { quadrantImage, startFakePredictionServer, startMediaServer } from '../support/fake-providers';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

type Prediction = Awaited<ReturnType<typeof startFakePredictionServer>>;
type Media = Awaited<ReturnType<typeof startMediaServer>>;

interface ToolStack {
  prediction: Prediction;
  media: Media;
  gateway: TestGateway;
  worker: TestWorker;
}

/** A worker and gateway of their own, a fake prediction provider and a media server, for a describe block. */
function useToolStack(held: boolean, overrides: Record<string, string>): ToolStack {
  const stack = {} as ToolStack;
  let storageDir: string;
  before(async () => {
    storageDir = await mkdtemp(path.join(tmpdir(), 'credits-'));
    stack.prediction = await startFakePredictionServer({ pollsBeforeDone: 1, held });
    stack.media = await startMediaServer();
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `credits-${randomUUID()}`,
      STORAGE_LOCAL_DIR: storageDir,
      IMAGE_PROVIDER: 'prediction',
      PREDICTION_API_URL: stack.prediction.url,
      PREDICTION_API_TOKEN: 'test-token',
      PROVIDER_POLL_INTERVAL: '100ms',
      ...overrides,
    });
    stack.worker = await startWorker({ config });
    stack.gateway = await startGateway({ config });
  });
  after(async () => {
    stack.prediction?.release();
    await stack.gateway?.close();
    await stack.worker?.stop();
    await stack.prediction?.close();
    await stack.media?.close();
    await rm(storageDir, { recursive: true, force: true });
  });
  return stack;
}

const call = async (tools: ToolStack, who: TestUser, tool: string, body: unknown) => {
  const res = await fetch(`${tools.gateway.url}/api/v1/tools/${tool}`, {
    method: 'POST',
    headers: { ...who.bearer, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

/** A small crop of a fresh image: the cheapest tool, run locally. */
const cropInput = async (media: Media) => ({
  image_url: media.add(`${randomUUID()}.png`, await quadrantImage(20, 20), 'image/png'),
  x: 0,
  y: 0,
  width: 5,
  height: 5,
});
const cropFor = async (tools: ToolStack, who: TestUser) =>
  call(tools, who, 'crop_image', await cropInput(tools.media));

async function setBalance(user: TestUser, credits: string): Promise<void> {
  const { db } = await testStack();
  await db.pool.query('UPDATE "User" SET "creditBalance" = $2 WHERE id = $1', [user.userId, credits]);
}

async function account(user: TestUser) {
  const { db } = await testStack();
  const { rows } = await db.pool.query<{ balance: string; active: number; calls: number; charges: number }>(
    `SELECT u."creditBalance"::text AS balance, u."activeToolCalls" AS active,
            (SELECT count(*)::int FROM "ToolCall" t WHERE t."userId" = u.id) AS calls,
            (SELECT count(*)::int FROM "CreditLedgerEntry" c WHERE c."userId" = u.id) AS charges
       FROM "User" u WHERE u.id = $1`,
    [user.userId],
  );
  return rows[0];
}

describe('credit balance', function () {
  this.timeout(120_000);
  const tools = useToolStack(false, { CREDIT_GRANT_ON_SIGN_UP: '7.5' });

  it('refuses a call the balance cannot pay with 402 INSUFFICIENT_CREDITS, writing and starting nothing', async () => {
    const user = await createTestUser();
    await setBalance(user, '15');
    assert.equal((await call(tools, user, 'ai_image_2', { prompt: 'first' })).status, 200);
    assert.deepEqual(await account(user), { balance: '5.0000', active: 0, calls: 1, charges: 1 });

    const jobs = tools.prediction.created.length;
    const refused = await call(tools, user, 'ai_image_2', { prompt: 'second' });
    assert.equal(refused.status, 402);
    assert.equal(refused.body.code, 'INSUFFICIENT_CREDITS');
    assert.equal(tools.prediction.created.length, jobs, 'no provider job');
    assert.deepEqual(await account(user), { balance: '5.0000', active: 0, calls: 1, charges: 1 });

    // A cheaper tool still fits the balance.
    const crop = await cropFor(tools, user);
    assert.equal(crop.status, 200, JSON.stringify(crop.body));
    assert.equal((await account(user))?.balance, '4.0000');
  });

  it('gives a failed call its reservation back', async () => {
    const user = await createTestUser();
    await setBalance(user, '10');
    const res = await call(tools, user, 'ai_image_2', { prompt: 'fail please' });
    assert.equal(res.status, 502);
    assert.deepEqual(await account(user), { balance: '10.0000', active: 0, calls: 1, charges: 0 });
  });

  it('lets racing calls spend only what the balance holds', async () => {
    const user = await createTestUser();
    await setBalance(user, '10');
    const answers = await Promise.all([
      call(tools, user, 'ai_image_2', { prompt: 'race a' }),
      call(tools, user, 'ai_image_2', { prompt: 'race b' }),
    ]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 402]);
    assert.equal(answers.find((a) => a.status === 402)?.body.code, 'INSUFFICIENT_CREDITS');
    const after = await account(user);
    assert.equal(after?.balance, '0.0000');
    assert.equal(after?.charges, 1);
  });

  it('charges a call once however often its activity runs', async () => {
    const user = await createTestUser();
    await setBalance(user, '3');
    const activities = createToolsActivities(tools.worker.deps);
    const input = {
      toolCallId: randomUUID(),
      toolName: 'crop_image',
      input: await cropInput(tools.media),
      userId: user.userId,
    };
    await new MockActivityEnvironment().run(activities.runTool, input);
    await new MockActivityEnvironment().run(activities.runTool, input);
    assert.deepEqual(await account(user), { balance: '2.0000', active: 0, calls: 1, charges: 1 });
  });

  // An attempt whose provider answers after another attempt recorded the call, or after the call
  // was closed (its run ended, its workflow gave up), must change nothing: runTool only gets this
  // far while the row was RUNNING when it opened, so this is the recording statement's own guard.
  it('records a success only of a call still running: a late attempt charges and changes nothing', async () => {
    const user = await createTestUser();
    await setBalance(user, '3');
    const { pool } = tools.worker.deps.db;
    const result = (providerRunId: string): ToolResult => ({
      toolName: 'crop_image',
      output: { url: `https://files.example.test/${providerRunId}.png`, provider: 'local' },
      assets: [],
      creditCost: '1',
      durationMs: 5,
      providerRunId,
    });
    const open = async () => {
      const toolCallId = randomUUID();
      const opened = await openToolCall(pool, {
        toolCallId,
        toolName: 'crop_image',
        input: {},
        userId: user.userId,
        price: '1',
        maxActive: 10,
      });
      assert.equal(opened.outcome, 'opened');
      return toolCallId;
    };

    const recorded = await open();
    assert.ok(
      await recordToolSuccess(pool, { toolCallId: recorded, userId: user.userId, result: result('first') }),
    );
    const again = { toolCallId: recorded, userId: user.userId, result: result('second') };
    assert.equal(await recordToolSuccess(pool, again), null, 'a second success of one call is not recorded');
    assert.equal((await readToolCall(pool, recorded))?.result?.providerRunId, 'first');

    const closed = await open();
    await markToolCallFailed(pool, closed, 'The tool call was cancelled.');
    const late = { toolCallId: closed, userId: user.userId, result: result('late') };
    assert.equal(await recordToolSuccess(pool, late), null, 'a closed call is not recorded as succeeded');
    assert.equal((await readToolCall(pool, closed))?.status, 'FAILED');
    assert.deepEqual(await account(user), { balance: '2.0000', active: 0, calls: 2, charges: 1 });
  });

  it('keeps one charge per call in the ledger, whatever tries to write a second', async () => {
    const user = await createTestUser();
    await setBalance(user, '3');
    const activities = createToolsActivities(tools.worker.deps);
    const toolCallId = randomUUID();
    const input = {
      toolCallId,
      toolName: 'crop_image',
      input: await cropInput(tools.media),
      userId: user.userId,
    };
    await new MockActivityEnvironment().run(activities.runTool, input);
    const { db } = await testStack();
    await assert.rejects(
      db.pool.query(
        `INSERT INTO "CreditLedgerEntry" (id, "userId", "toolCallId", amount, reason)
         VALUES (gen_random_uuid(), $1, $2, 1, 'tool:crop_image')`,
        [user.userId, toolCallId],
      ),
      { code: '23505' },
    );
    assert.equal((await account(user))?.charges, 1);
  });

  it('starts a new account with CREDIT_GRANT_ON_SIGN_UP credits', async () => {
    const res = await fetch(`${tools.gateway.url}/api/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: tools.gateway.url },
      body: JSON.stringify({
        email: `grant-${randomUUID()}@example.test`,
        password: 'correct horse battery',
      }),
    });
    assert.equal(res.status, 201);
    assert.equal(((await res.json()) as { user: { creditBalance: string } }).user.creditBalance, '7.5');
  });
});

describe('tool calls running per user', function () {
  this.timeout(120_000);
  const CAP = 2;
  const tools = useToolStack(true, { MAX_ACTIVE_TOOL_CALLS_PER_USER: String(CAP) });

  it('answers 429 ACTIVE_LIMIT past MAX_ACTIVE_TOOL_CALLS_PER_USER while another user is served', async () => {
    const [greedy, normal] = await Promise.all([createTestUser(), createTestUser()]);
    const held = Array.from({ length: CAP }, (_, i) =>
      call(tools, greedy, 'ai_image_2', { prompt: `held ${i}` }),
    );
    await waitFor(async () => ((await account(greedy))?.active === CAP ? true : undefined), {
      what: 'the greedy calls running',
    });

    const refused = await call(tools, greedy, 'ai_image_2', { prompt: 'one more' });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'ACTIVE_LIMIT');
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After is set');
    assert.equal((await account(greedy))?.calls, CAP, 'the refused call wrote nothing');

    // Another user's call runs to its end while the greedy calls are all still held.
    const crop = await cropFor(tools, normal);
    assert.equal(crop.status, 200, JSON.stringify(crop.body));
    assert.equal((await account(greedy))?.active, CAP);

    tools.prediction.release();
    assert.deepEqual(
      (await Promise.all(held)).map((r) => r.status),
      [200, 200],
    );
    assert.equal((await account(greedy))?.active, 0, 'each ending gave its slot back');
  });
});
