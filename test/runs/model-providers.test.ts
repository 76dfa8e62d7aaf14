import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelEntry } from '../../core/config/models';
import { languageModelOf } from '../../core/model/catalog';
import { callModel, MODEL_RETRYABLE, type ModelCall } from '../../core/model/complete';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { quadrantImage } from '../support/fake-providers';
import { startFakeModelServer, type FakeModelServer, type FakeProtocol } from '../support/fake-models';
import { waitFor } from '../support/wait';
import { createWebhookEndpoint } from '../support/webhooks';

const PROTOCOLS: FakeProtocol[] = ['openai', 'anthropic', 'google', 'openai-compatible'];
const KEY = 'sk-test-not-a-real-key';

const CROP_SPEC = {
  name: 'crop_image',
  description: 'Crop an image',
  parameters: {
    type: 'object',
    properties: { image_url: { type: 'string' }, x: { type: 'number' } },
  },
};

/** Where each protocol puts what the service sent: its key, its instructions, its tools' names. */
const sent: Record<
  FakeProtocol,
  {
    key: (headers: Record<string, unknown>) => unknown;
    system: (body: Record<string, unknown>) => unknown;
    tools: (body: Record<string, unknown>) => unknown;
  }
> = {
  openai: {
    key: (h) => h.authorization,
    system: (b) => (b.input as { role: string; content: string }[]).find((m) => m.role === 'system')?.content,
    tools: (b) => (b.tools as { name: string }[]).map((t) => t.name),
  },
  anthropic: {
    key: (h) => h['x-api-key'],
    system: (b) => (b.system as { text: string }[])[0]?.text,
    tools: (b) => (b.tools as { name: string }[]).map((t) => t.name),
  },
  google: {
    key: (h) => h['x-goog-api-key'],
    system: (b) => (b.systemInstruction as { parts: { text: string }[] }).parts[0]?.text,
    tools: (b) =>
      (b.tools as { functionDeclarations: { name: string }[] }[])[0]?.functionDeclarations.map((t) => t.name),
  },
  'openai-compatible': {
    key: (h) => h.authorization,
    system: (b) => (b.messages as { role: string; content: string }[])[0]?.content,
    tools: (b) => (b.tools as { function: { name: string } }[]).map((t) => t.function.name),
  },
};
/** How each protocol carries an image of the user's message. */
const IMAGE_PART: Record<FakeProtocol, string> = {
  openai: '"type":"input_image"',
  anthropic: '"type":"image"',
  google: '"inlineData":{"mimeType":"image/png"',
  'openai-compatible': '"image_url":{"url":"data:image/png;base64,',
};
const expectedKey = (protocol: FakeProtocol) =>
  protocol === 'anthropic' || protocol === 'google' ? KEY : `Bearer ${KEY}`;

function entryFor(protocol: FakeProtocol, baseUrl: string): ModelEntry {
  return {
    name: protocol,
    provider: protocol,
    modelId: 'fake-model',
    baseUrl,
    apiKey: KEY,
    contextWindow: 100_000,
    maxOutputTokens: 1_000,
    price: { input: '2', output: '10', cachedInput: '1' },
  };
}

/** One call through the AI SDK to the fake, as a step makes it: instructions, a message, a tool. */
function callFake(fake: FakeModelServer, overrides: Partial<ModelCall> = {}) {
  const entry = entryFor(fake.protocol, fake.baseURL);
  return callModel({
    model: { ...entry, language: languageModelOf(entry, { LOCAL_MODEL_PACE: 0 }) },
    system: 'Answer briefly.',
    messages: [{ role: 'user', text: 'hi', media: [] }],
    tools: [CROP_SPEC],
    signal: new AbortController().signal,
    idleTimeoutMs: 5_000,
    download: async (requests) => requests.map(() => null),
    maxOutputTokens: 500,
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => assert.fail('expected the call to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApplicationFailure, String(err));
  return err;
}

describe('model providers, each through its own wire protocol on loopback', function () {
  this.timeout(180_000);

  for (const protocol of PROTOCOLS) {
    describe(protocol, () => {
      let fake: FakeModelServer;
      beforeEach(async () => {
        fake = await startFakeModelServer(protocol);
      });
      afterEach(() => fake.close());

      const call = (overrides: Partial<ModelCall> = {}) => callFake(fake, overrides);

      it("streams text piece by piece with the provider's usage, and sends the key, the instructions and the tools", async () => {
        fake.script({
          kind: 'stream',
          text: ['Hel', 'lo ', 'there'],
          usage: { input: 120, output: 7, cached: 40 },
        });
        const pieces: string[] = [];
        const result = await call({ onText: (d) => pieces.push(d) });
        assert.deepEqual(pieces, ['Hel', 'lo ', 'there']);
        assert.deepEqual(result, {
          reply: { text: 'Hello there', toolCalls: [] },
          usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 40 },
        });
        const request = fake.requests[0];
        assert.ok(request);
        assert.equal(sent[protocol].key(request.headers), expectedKey(protocol));
        assert.equal(sent[protocol].system(request.body), 'Answer briefly.');
        assert.deepEqual(sent[protocol].tools(request.body), ['crop_image']);
      });

      it('assembles a tool call whose arguments stream in pieces', async () => {
        fake.script({
          kind: 'stream',
          text: ['Cropping.'],
          toolCalls: [
            {
              id: 'call_a',
              name: 'crop_image',
              argumentChunks: ['{"image_url":"https://e.test/a.png",', '"x":4}'],
            },
          ],
        });
        const { reply } = await call();
        assert.equal(reply.text, 'Cropping.');
        assert.equal(reply.toolCalls.length, 1);
        assert.equal(reply.toolCalls[0]?.toolName, 'crop_image');
        assert.deepEqual(reply.toolCalls[0]?.input, { image_url: 'https://e.test/a.png', x: 4 });
        // Gemini has no call ids: the SDK makes one up.
        if (protocol !== 'google') assert.equal(reply.toolCalls[0]?.id, 'call_a');
      });

      it('makes a 429 retryable after its retry-after, and a 5xx retryable; the SDK itself never retries', async () => {
        fake.script(
          { kind: 'error', status: 429, retryAfter: '2' },
          { kind: 'error', status: protocol === 'anthropic' ? 529 : 503 },
        );
        const limited = await failure(call());
        assert.equal(limited.type, MODEL_RETRYABLE);
        assert.equal(limited.nonRetryable, false);
        assert.equal(limited.nextRetryDelay, 2_000);
        const down = await failure(call());
        assert.equal(down.type, MODEL_RETRYABLE);
        assert.equal(down.nonRetryable, false);
        assert.equal(fake.requests.length, 2);
      });

      it('makes a stream cut mid-way retryable, after its first pieces streamed', async () => {
        fake.script({ kind: 'cut', text: ['Once ', 'upon ', 'a ', 'time'] });
        const pieces: string[] = [];
        const cut = await failure(call({ onText: (d) => pieces.push(d) }));
        assert.equal(cut.type, MODEL_RETRYABLE);
        assert.equal(cut.nonRetryable, false);
        assert.ok(pieces.length > 0, 'some text streamed before the cut');
      });

      it('cuts a provider gone silent after MODEL_TIMEOUT, retryable', async () => {
        fake.script({ kind: 'hang' });
        const started = Date.now();
        const silent = await failure(call({ idleTimeoutMs: 300 }));
        assert.equal(silent.nonRetryable, false);
        assert.ok(Date.now() - started < 5_000);
      });

      it('fails for good, saying why, on a context-length error, a refused key and a bad request', async () => {
        fake.script(
          { kind: 'context-length' },
          { kind: 'error', status: 401 },
          { kind: 'error', status: 400 },
        );
        const tooLong = await failure(call());
        assert.equal(tooLong.type, 'PROVIDER_ERROR');
        assert.equal(tooLong.nonRetryable, true);
        assert.match(tooLong.message, /context window/);
        const key = await failure(call());
        assert.equal(key.nonRetryable, true);
        assert.match(key.message, /API key \(401\)/);
        assert.doesNotMatch(key.message, new RegExp(KEY));
        const bad = await failure(call());
        assert.equal(bad.nonRetryable, true);
        assert.match(bad.message, /refused the request \(400\)/);
      });
    });
  }

  it('passes malformed tool arguments on, marked, for the tool schema to refuse (OpenAI-compatible)', async () => {
    const fake = await startFakeModelServer('openai-compatible');
    try {
      fake.script({
        kind: 'stream',
        toolCalls: [{ id: 'c', name: 'crop_image', argumentChunks: ['{"image_url": '] }],
      });
      const { reply } = await callFake(fake);
      assert.deepEqual(reply.toolCalls[0]?.input, { malformed_arguments: '{"image_url": ' });
    } finally {
      await fake.close();
    }
  });
});

interface Snapshot {
  status: string;
  text: string;
  error: string | null;
  waitingFor: {
    kind: string;
    reason?: string;
    attempt?: number;
    maxAttempts?: number;
    retryAt?: string;
  } | null;
  toolCalls: { toolName: string; status: string; result: { output: { url: string } } | null }[];
  waitpoints: {
    id: string;
    plan: { steps: { toolName: string; credits?: string }[]; totalCredits?: string };
  }[];
  settings: { model: string | null } | null;
  usage: {
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens: number;
    steps: number;
    credits: string;
  };
}

/**
 * One plan-mode turn with crop_image per provider, through the test kit's gateway, a worker, the
 * Temporal dev server and PostgreSQL: the model's tool call, the priced plan, the approval, the
 * crop, the model's answer with the tool's result, and the usage and credits of both steps.
 */
describe('a plan-mode turn with crop_image on each provider, end to end', function () {
  this.timeout(300_000);
  const fakes = new Map<FakeProtocol, FakeModelServer>();
  let gateway: TestGateway;
  let worker: TestWorker;
  let user: TestUser;

  before(async () => {
    for (const p of PROTOCOLS) fakes.set(p, await startFakeModelServer(p));
    const port = await freePort();
    const models = PROTOCOLS.map((p) => ({
      name: p,
      provider: p,
      modelId: 'fake-model',
      baseUrl: fakes.get(p)?.baseURL,
      apiKeyEnv: 'FAKE_PROVIDER_KEY',
      contextWindow: 100_000,
      maxOutputTokens: 1_000,
      price: { input: 2, output: 10, cachedInput: 1 },
    }));
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `providers-${randomUUID()}`,
      MODELS: JSON.stringify(models),
      FAKE_PROVIDER_KEY: KEY,
      // Tools (and the SDK, for a provider that takes no image URL) fetch uploads by their URLs.
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      STORAGE_LOCAL_DIR: await mkdtemp(path.join(tmpdir(), 'svc-providers-')),
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config, port });
    user = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    for (const fake of fakes.values()) await fake.close();
  });

  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${gateway.url}${p}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...user.bearer, ...init.headers },
    });
  const snapshot = async (chatId: string, runId: string) =>
    (await (await api(`/api/v1/chats/${chatId}/runs/${runId}`)).json()) as Snapshot;
  const until = (chatId: string, runId: string, accept: (s: Snapshot) => boolean, what: string) =>
    waitFor(
      async () => {
        const s = await snapshot(chatId, runId);
        return accept(s) ? s : undefined;
      },
      { what, timeoutMs: 90_000 },
    );

  const finished = async (body: Record<string, unknown>) => {
    const res = await api('/api/v1/completions', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(res.status, 202, await res.clone().text());
    const { chatId, runId } = (await res.json()) as { chatId: string; runId: string };
    return until(chatId, runId, (s) => ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status), 'the run');
  };

  it('completes a run through Temporal’s retries after a 429 (its retry-after), a 529 and a stream cut, charging the step once', async () => {
    const fake = fakes.get('anthropic') as FakeModelServer;
    const before = fake.requests.length;
    fake.script(
      { kind: 'error', status: 429, retryAfter: '1' },
      { kind: 'error', status: 529 },
      { kind: 'cut', text: ['Recov', 'ering'] },
      { kind: 'stream', text: ['Recovered.'], usage: { input: 500, output: 5 } },
    );
    const done = await finished({ text: 'hello', model: 'anthropic' });
    assert.equal(done.status, 'COMPLETE', done.error ?? '');
    assert.equal(done.text, 'Recovered.');
    assert.equal(fake.requests.length - before, 4);
    // 500 × 2 + 5 × 10 per million, once.
    assert.equal(done.usage.credits, '0.0011');
    assert.equal(done.usage.inputTokens, 500);
  });

  it("says while a step waits out a provider's rate limit what it waits for and until when, then moves on", async () => {
    const fake = fakes.get('anthropic') as FakeModelServer;
    fake.script(
      { kind: 'error', status: 429, retryAfter: '3' },
      { kind: 'error', status: 503 },
      { kind: 'stream', text: ['Waited.'], usage: { input: 10, output: 2 } },
    );
    const res = await api('/api/v1/completions', {
      method: 'POST',
      body: JSON.stringify({ text: 'hello', model: 'anthropic' }),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const { chatId, runId } = (await res.json()) as { chatId: string; runId: string };
    const limited = await until(
      chatId,
      runId,
      (s) => s.waitingFor?.kind === 'provider_retry',
      'the rate limit',
    );
    const seen = Date.now();
    assert.equal(limited.status, 'RUNNING');
    assert.deepEqual(
      { ...limited.waitingFor, retryAt: undefined },
      {
        kind: 'provider_retry',
        reason: 'rate_limited',
        attempt: 2,
        maxAttempts: 4,
        retryAt: undefined,
      },
    );
    // Its retry-after: three seconds after the 429, which came before the poll that saw it.
    const waitMs = Date.parse(limited.waitingFor!.retryAt!) - seen;
    assert.ok(waitMs > 0 && waitMs <= 3_000, `retryAt is ${waitMs} ms away`);
    const errored = await until(
      chatId,
      runId,
      (s) => s.waitingFor?.reason === 'provider_error' || s.status !== 'RUNNING',
      'the 503',
    );
    assert.equal(errored.waitingFor?.attempt, 3);
    const done = await until(chatId, runId, (s) => s.status === 'COMPLETE', 'the run');
    assert.equal(done.waitingFor, null);
    assert.equal(done.text, 'Waited.');
    // The run's stream told each wait as it began and when the step moved again.
    const { rows } = await (
      await testStack()
    ).db.pool.query<{ data: { waitingFor: { reason: string } | null } }>(
      `SELECT data FROM "RunEvent" WHERE "runId" = $1 AND type = 'waiting' ORDER BY seq`,
      [runId],
    );
    assert.deepEqual(
      rows.map((r) => r.data.waitingFor?.reason ?? null),
      ['rate_limited', null, 'provider_error', null],
    );
  });

  it('fails a run whose conversation the provider finds too long, saying so, and charges nothing', async () => {
    const fake = fakes.get('google') as FakeModelServer;
    fake.script({ kind: 'context-length' });
    const done = await finished({ text: 'hello', model: 'google' });
    assert.equal(done.status, 'FAILED');
    assert.match(done.error ?? '', /does not fit the model's context window/);
    assert.equal(done.usage.credits, '0');
  });

  for (const protocol of PROTOCOLS) {
    it(`${protocol}: proposes the crop at its price, runs it once approved, answers with its result, and charges the tokens`, async () => {
      const fake = fakes.get(protocol) as FakeModelServer;
      const form = new FormData();
      form.append('file', new Blob([await quadrantImage(64, 48)]), 'quadrants.png');
      const uploaded = await fetch(`${gateway.url}/api/v1/uploads`, {
        method: 'POST',
        headers: user.bearer,
        body: form,
      });
      assert.equal(uploaded.status, 201, await uploaded.clone().text());
      const attachmentId = ((await uploaded.json()) as { attachments: { id: string }[] }).attachments[0]?.id;
      const args = JSON.stringify({
        attachmentId,
        x_percent: 0,
        y_percent: 0,
        width_percent: 50,
        height_percent: 100,
      });
      fake.script(
        {
          kind: 'stream',
          text: ['I will crop ', 'the left half.'],
          toolCalls: [
            { id: 'call_crop', name: 'crop_image', argumentChunks: [args.slice(0, 20), args.slice(20)] },
          ],
          usage: { input: 1_000, output: 20, cached: 200 },
        },
        { kind: 'stream', text: ['Here is ', 'the left half.'], usage: { input: 1_500, output: 10 } },
      );
      const endpoint = await createWebhookEndpoint(gateway.url, user, 'http://127.0.0.1:9/hooks', [
        'agent.completed',
      ]);
      const before = fake.requests.length;

      const sent = await api('/api/v1/completions', {
        method: 'POST',
        body: JSON.stringify({
          text: 'Crop the left half',
          attachmentIds: [attachmentId],
          planMode: true,
          model: protocol,
        }),
      });
      assert.equal(sent.status, 202, await sent.clone().text());
      const { chatId, runId } = (await sent.json()) as { chatId: string; runId: string };

      const waiting = await until(
        chatId,
        runId,
        (s) => s.status === 'WAITING' || s.status === 'FAILED',
        'the plan',
      );
      assert.equal(waiting.status, 'WAITING', waiting.error ?? '');
      const plan = waiting.waitpoints[0]?.plan;
      assert.deepEqual(
        plan?.steps.map((s) => [s.toolName, s.credits]),
        [['crop_image', '1']],
      );
      assert.equal(plan?.totalCredits, '1');
      assert.equal(waiting.settings?.model, protocol);

      const decided = await api(
        `/api/v1/chats/${chatId}/runs/${runId}/waitpoints/${waiting.waitpoints[0]?.id}/complete`,
        {
          method: 'POST',
          body: JSON.stringify({ approved: true }),
        },
      );
      assert.equal(decided.status, 202, await decided.clone().text());
      const done = await until(
        chatId,
        runId,
        (s) => ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status),
        'the run',
      );
      assert.equal(done.status, 'COMPLETE', done.error ?? '');
      assert.equal(done.text, 'I will crop the left half.\n\nHere is the left half.');
      assert.deepEqual(
        done.toolCalls.map((c) => [c.toolName, c.status]),
        [['crop_image', 'SUCCEEDED']],
      );

      // The upload reached the model as an image, in the provider's own form: by URL, or fetched
      // through the guarded client and sent inline for a provider that takes no URL.
      assert.equal(fake.requests.length - before, 2);
      const firstBody = JSON.stringify(fake.requests[before]?.body);
      assert.ok(
        firstBody.includes(IMAGE_PART[protocol]),
        `${protocol} got the image: ${firstBody.slice(0, 400)}`,
      );
      // The second step sent the crop's result back to the model in the provider's own form.
      const cropUrl = done.toolCalls[0]?.result?.output.url ?? '';
      const secondBody = JSON.stringify(fake.requests.at(-1)?.body);
      assert.ok(
        secondBody.includes(new URL(cropUrl).pathname.split('/').pop() ?? '-'),
        'the tool result reached the model',
      );

      // (1000 - 200) × 2 + 200 × 1 + 20 × 10 = 2000, then 1500 × 2 + 10 × 10 = 3100, per million: 0.0051.
      assert.deepEqual(done.usage, {
        inputTokens: 2_500,
        outputTokens: 30,
        cachedInputTokens: 200,
        steps: 2,
        credits: '1.0051',
        compacted: false,
      });
      const { db } = await testStack();
      const ledger = await db.pool.query<{ amount: string; reason: string }>(
        `SELECT l.amount::text, l.reason FROM "CreditLedgerEntry" l
           LEFT JOIN "ModelCall" m ON m.id = l."modelCallId" LEFT JOIN "ToolCall" t ON t.id = l."toolCallId"
          WHERE m."runId" = $1 OR t."runId" = $1 ORDER BY l."createdAt", l.reason`,
        [runId],
      );
      assert.deepEqual(
        ledger.rows.map((r) => [r.reason, Number(r.amount)]).sort(),
        [
          [`model:reply:${protocol}`, 0.002],
          [`model:reply:${protocol}`, 0.0031],
          ['tool:crop_image', 1],
        ].sort(),
      );
      // agent.completed carries the same usage.
      const delivery = await waitFor(
        async () =>
          (
            await db.pool.query<{ payload: { data: { usage?: unknown } } }>(
              `SELECT payload FROM "WebhookDelivery" WHERE "endpointId" = $1 AND event = 'agent.completed'`,
              [endpoint.id],
            )
          ).rows[0],
        { what: 'the agent.completed delivery' },
      );
      assert.deepEqual(delivery.payload.data.usage, done.usage);
    });
  }
});
