import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentActivities } from '../../activities/agent';
import { workerMetrics } from '../../core/metrics/worker';
import { LocalLanguageModel } from '../../core/model/local';
import { modelToolSpecs } from '../../core/tools/registry';
import { admitTurn } from '../../operations/runs/admission';
import { fillLongChat } from '../../testkit/long-chat';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, testModels, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

interface Snapshot {
  status: string;
  text: string;
  error: string | null;
  toolCalls: { toolName: string; status: string }[];
  settings: {
    model: string | null;
    instructions: string;
    maxSteps: number;
    tools: string[];
    budget: { maxCredits: string | null; maxToolCalls: number | null } | null;
  } | null;
  usage: {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens: number;
    steps: number;
    credits: string;
    compacted: boolean;
  };
  stepUsage: { step: number; model: string | null; compacted: boolean; credits: string }[];
}

/** The local model, recording what each call was given: the instructions, the tools, the messages. */
class RecordingLocalModel extends LocalLanguageModel {
  readonly calls: { system: string; tools: string[]; messages: number; summary: boolean }[] = [];
  override async doStream(options: LanguageModelV4CallOptions) {
    this.calls.push({
      system: options.prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n'),
      tools: (options.tools ?? []).map((t) => t.name),
      messages: options.prompt.filter((m) => m.role !== 'system').length,
      summary: options.providerOptions?.local?.summary === true,
    });
    return super.doStream(options);
  }
}

const DEFAULT_INSTRUCTIONS = 'You help with media.';

/**
 * The agent's settings, usage, credits, budgets and long chats, through the test kit's gateway,
 * a worker, Temporal and PostgreSQL: two local models on offer (the second priced), a cap of 5
 * steps.
 */
describe('agent settings, usage, credits, budgets and long chats', function () {
  this.timeout(240_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let user: TestUser;
  const models = [
    { name: 'local', provider: 'local' },
    // 1,000,000 credits per million tokens: a credit a token, so a step's charge is its tokens.
    { name: 'priced', provider: 'local', price: { input: 1_000_000, output: 1_000_000 } },
    { name: 'small', provider: 'local', contextWindow: 4_096, maxOutputTokens: 256 },
  ];
  const env = {
    MODELS: JSON.stringify(models),
    AGENT_MAX_STEPS: '5',
    AGENT_INSTRUCTIONS: DEFAULT_INSTRUCTIONS,
    IMAGE_PROVIDER: 'local-preview',
  };
  let recording: RecordingLocalModel;

  beforeEach(async () => {
    recording = new RecordingLocalModel();
    const config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `settings-${randomUUID()}`, ...env });
    worker = await startWorker({ config, model: recording });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  afterEach(async () => {
    await gateway?.close();
    await worker?.stop();
  });

  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${gateway.url}${p}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...user.bearer, ...init.headers },
    });
  const send = async (body: Record<string, unknown>) => {
    const res = await api('/api/v1/completions', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { chatId: string; runId: string };
  };
  const finished = (turn: { chatId: string; runId: string }) =>
    waitFor(
      async () => {
        const s = (await (await api(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`)).json()) as Snapshot;
        return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status) ? s : undefined;
      },
      { what: 'the run to end', timeoutMs: 120_000 },
    );
  const balance = async () => {
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ b: string }>(
      `SELECT "creditBalance"::text AS b FROM "User" WHERE id = $1`,
      [user.userId],
    );
    return Number(rows[0]?.b);
  };

  it("runs with the chat's defaults, a send's own values winning, and shows what each run used", async () => {
    const first = await finished(await send({ text: 'hello' }));
    assert.deepEqual(first.settings, {
      model: 'local',
      instructions: DEFAULT_INSTRUCTIONS,
      maxSteps: 5,
      tools: ['crop_image', 'ai_image_2', 'merge_videos'],
      budget: null,
    });
    const started = await send({ text: 'start a chat' });
    await finished(started);
    const { chatId } = started;
    const patched = await api(`/api/v1/chats/${chatId}`, {
      method: 'PATCH',
      body: JSON.stringify({
        model: 'priced',
        instructions: 'Be terse.',
        maxSteps: 3,
        tools: ['crop_image'],
      }),
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.deepEqual(((await patched.json()) as { settings: unknown }).settings, {
      model: 'priced',
      instructions: 'Be terse.',
      maxSteps: 3,
      tools: ['crop_image'],
    });

    const byChat = await finished(await send({ text: 'crop this', chatId }));
    assert.deepEqual(byChat.settings, {
      model: 'priced',
      instructions: 'Be terse.',
      maxSteps: 3,
      tools: ['crop_image'],
      budget: null,
    });
    assert.deepEqual(recording.calls.at(-1)?.tools, ['crop_image']);
    assert.equal(recording.calls.at(-1)?.system, 'Be terse.');

    const bySend = await finished(
      await send({
        text: 'generate an image of a fox',
        chatId,
        model: 'local',
        tools: [],
        budget: { maxToolCalls: 0 },
      }),
    );
    assert.deepEqual(bySend.settings, {
      model: 'local',
      instructions: 'Be terse.',
      maxSteps: 3,
      tools: [],
      budget: { maxCredits: null, maxToolCalls: 0 },
    });
    // Offered no tool, the model calls none.
    assert.deepEqual(recording.calls.at(-1)?.tools, []);
    assert.equal(bySend.status, 'COMPLETE');
    assert.match(bySend.text, /cannot use/);

    // A default cleared with null falls back to the operator's.
    const cleared = await api(`/api/v1/chats/${chatId}`, {
      method: 'PATCH',
      body: JSON.stringify({ instructions: null, tools: null }),
    });
    assert.deepEqual(((await cleared.json()) as { settings: unknown }).settings, {
      model: 'priced',
      maxSteps: 3,
    });
  });

  it('refuses a bad setting with 400 naming the field, and writes nothing', async () => {
    const { db } = await testStack();
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'gpt-9' }, 'body.model'],
      [{ maxSteps: 6 }, 'body.maxSteps'],
      [{ maxSteps: 0 }, 'body.maxSteps'],
      [{ tools: ['crop_image', 'crop_image'] }, 'body.tools'],
      [{ tools: ['shell'] }, 'body.tools.0'],
      [{ instructions: 'x'.repeat(8_193) }, 'body.instructions'],
      [{ budget: { maxCredits: 0 } }, 'body.budget.maxCredits'],
      [{ budget: { maxToolCalls: -1 } }, 'body.budget.maxToolCalls'],
      [{ budget: { maxSpend: 3 } }, 'body.budget'],
    ];
    for (const [settings, field] of cases) {
      const res = await api('/api/v1/completions', {
        method: 'POST',
        body: JSON.stringify({ text: 'refused', ...settings }),
      });
      assert.equal(res.status, 400, JSON.stringify(settings));
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.ok(
        body.details.some((d) => d.path === field),
        `${JSON.stringify(settings)}: ${JSON.stringify(body.details)}`,
      );
    }
    const written = await db.pool.query(`SELECT 1 FROM "Chat" WHERE "userId" = $1`, [user.userId]);
    assert.equal(written.rowCount, 0, 'no chat, message or run written');

    const chatRes = await api('/api/v1/chats', { method: 'POST', body: '{}' });
    const chat = (await chatRes.json()) as { id: string };
    for (const [patch, field] of [
      [{ model: 'nope' }, 'body.model'],
      [{ maxSteps: 9 }, 'body.maxSteps'],
    ] as const) {
      const res = await api(`/api/v1/chats/${chat.id}`, { method: 'PATCH', body: JSON.stringify(patch) });
      assert.equal(res.status, 400);
      assert.ok(
        ((await res.json()) as { details: { path: string }[] }).details.some((d) => d.path === field),
      );
    }
    const unchanged = (await (await api(`/api/v1/chats/${chat.id}`)).json()) as { settings: unknown };
    assert.deepEqual(unchanged.settings, {});
  });

  it('stops at the run’s maxSteps', async () => {
    await worker.stop();
    const draw = () => ({
      text: 'Drawing.',
      toolCalls: [{ id: randomUUID(), toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
    });
    const scripted = new ScriptedModel([draw(), draw(), draw(), draw()]);
    worker = await startWorker({ config: worker.deps.config, model: scripted });
    const done = await finished(await send({ text: 'draw cats', maxSteps: 2 }));
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.equal(scripted.calls.length, 2, 'two model steps');
    assert.equal(done.usage.steps, 2);
    assert.deepEqual(
      done.toolCalls.map((c) => c.status),
      ['SUCCEEDED', 'SUCCEEDED'],
    );
  });

  it("charges a step's tokens at its model's price, once however often the step is retried", async () => {
    const { db } = await testStack();
    const scripted = new ScriptedModel([{ text: 'Charged once.', toolCalls: [] }]);
    scripted.usage = { input: 300, output: 20, cached: 0 };
    const { run } = await admitTurn(gateway.deps, {
      userId: user.userId,
      via: 'rest',
      text: 'hello',
      imageUrls: [],
      attachmentIds: [],
      planMode: false,
      settings: { model: 'priced' },
    });
    const activities = createAgentActivities({
      ...worker.deps,
      models: testModels(worker.deps.config, scripted),
      toolSpecs: modelToolSpecs(),
    });
    const envs = new MockActivityEnvironment({
      workflowExecution: { workflowId: run.chatId, runId: randomUUID() },
    });
    const input = { runId: run.runId, step: 1, textSoFar: '', contentBlocks: [], turnMessages: [] };
    const before = await balance();
    const first = (await envs.run(activities.agentStep, input)) as { kind: string };
    assert.equal(first.kind, 'ended');
    // The step again, as Temporal retries one whose ending never committed: it finds its reply
    // charged and goes on with it.
    await db.pool.query(`UPDATE "Run" SET status = 'RUNNING', "finishedAt" = NULL WHERE id = $1`, [
      run.runId,
    ]);
    // The state of a step whose reply was charged and whose ending did not commit (its worker died).
    const again = (await envs.run(activities.agentStep, input)) as { kind: string };
    assert.equal(again.kind, 'ended');
    assert.equal(scripted.calls.length, 1, 'the model was asked once');
    const calls = await db.pool.query<{ status: string; credits: string; input: number }>(
      `SELECT status, credits::text, "inputTokens" AS input FROM "ModelCall" WHERE "runId" = $1`,
      [run.runId],
    );
    assert.deepEqual(calls.rows, [{ status: 'CHARGED', credits: '320.0000', input: 300 }]);
    const ledger = await db.pool.query<{ amount: string; reason: string }>(
      `SELECT amount::text, reason FROM "CreditLedgerEntry" l JOIN "ModelCall" m ON m.id = l."modelCallId"
        WHERE m."runId" = $1`,
      [run.runId],
    );
    assert.deepEqual(ledger.rows, [{ amount: '320.0000', reason: 'model:reply:priced' }]);
    assert.equal(before - (await balance()), 320);
    const tokens = await workerMetrics.getSingleMetricAsString('agent_model_tokens_total');
    assert.match(tokens, /agent_model_tokens_total\{model="priced",kind="input"\} \d+/);
    const credits = await workerMetrics.getSingleMetricAsString('agent_model_credits_total');
    assert.match(credits, /agent_model_credits_total\{model="priced"\} \d+/);
  });

  it('fails a step the balance cannot pay with INSUFFICIENT_CREDITS, before calling the model', async () => {
    const { db } = await testStack();
    await db.pool.query(`UPDATE "User" SET "creditBalance" = 10 WHERE id = $1`, [user.userId]);
    const calls = recording.calls.length;
    const done = await finished(await send({ text: 'hello', model: 'priced' }));
    assert.equal(done.status, 'FAILED');
    assert.match(done.error ?? '', /credit balance cannot pay for the next model call/);
    assert.equal(recording.calls.length, calls, 'the model was not called');
    assert.equal(await balance(), 10, 'nothing charged, nothing held');
  });

  it('ends a run whose next tool call or step would pass its budget, FAILED naming the budget, never spending past it', async () => {
    // maxToolCalls: the second call is refused.
    const oneCall = await finished(
      await send({
        text: 'generate an image of a fox',
        budget: { maxToolCalls: 0 },
      }),
    );
    assert.equal(oneCall.status, 'FAILED');
    assert.match(oneCall.error ?? '', /budget of 0 tool calls \(maxToolCalls\)/);
    assert.deepEqual(oneCall.toolCalls, []);
    // maxCredits: ai_image_2 costs 10, more than the budget leaves.
    const tooDear = await finished(
      await send({ text: 'generate an image of a fox', budget: { maxCredits: 5 } }),
    );
    assert.equal(tooDear.status, 'FAILED');
    assert.match(tooDear.error ?? '', /budget of 5 credits \(maxCredits\) cannot pay for ai_image_2/);
    assert.ok(Number(tooDear.usage.credits) <= 5);
    // A priced model's next step could cost more than the budget: refused before the call.
    const calls = recording.calls.length;
    const stepTooDear = await finished(
      await send({ text: 'hello', model: 'priced', budget: { maxCredits: 100 } }),
    );
    assert.equal(stepTooDear.status, 'FAILED');
    assert.match(stepTooDear.error ?? '', /budget of 100 credits \(maxCredits\) would be exceeded/);
    assert.equal(recording.calls.length, calls);
    assert.equal(stepTooDear.usage.credits, '0');
  });

  it('summarises a long chat once to fit the model’s window, reuses the summary, and says when it compacted', async () => {
    const { db } = await testStack();
    const total = 400;
    const { chatId } = await fillLongChat(db.pool, { userId: user.userId, messages: total, textLength: 200 });
    const first = await finished(await send({ text: 'what did I ask first?', chatId, model: 'small' }));
    assert.equal(first.status, 'COMPLETE', first.error ?? '');
    assert.equal(first.usage.compacted, true);
    assert.equal(first.stepUsage[0]?.compacted, true);
    const summary = await db.pool.query<{ messages: number; summary: string; at: Date }>(
      `SELECT messages, summary, "updatedAt" AS at FROM "ChatSummary" WHERE "chatId" = $1`,
      [chatId],
    );
    const covered = summary.rows[0]?.messages ?? 0;
    assert.ok(covered > total - 64, `the summary covers ${covered} of ${total} earlier messages`);
    assert.match(summary.rows[0]?.summary ?? '', /The user asked: "message \d+/);
    // Nothing was cut: what the summary does not cover went to the model whole (the run's own last).
    const reply = recording.calls.filter((c) => !c.summary).at(-1);
    assert.match(reply?.system ?? '', /Summary of the earlier part of this conversation/);
    assert.equal((reply?.messages ?? 0) - 1 + covered, total);

    const second = await finished(await send({ text: 'and then?', chatId, model: 'small' }));
    assert.equal(second.status, 'COMPLETE', second.error ?? '');
    assert.equal(second.usage.compacted, false, 'the stored summary is reused');
    const again = await db.pool.query<{ at: Date }>(
      `SELECT "updatedAt" AS at FROM "ChatSummary" WHERE "chatId" = $1`,
      [chatId],
    );
    assert.equal(again.rows[0]?.at.getTime(), summary.rows[0]?.at.getTime());
  });
});
