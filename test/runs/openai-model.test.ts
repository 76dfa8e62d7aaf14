import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { OpenAIModelProvider } from '../../core/model/openai';
import type { ModelRequest } from '../../core/model/types';
import { createTestUser } from '../../testkit/users';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { startGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker } from '../../testkit/worker';
import { createModelProvider } from '../../core/model';

const TOOLS = [
  {
    name: 'ai_image_2',
    description: 'Make an image',
    parameters: { type: 'object', properties: { prompt: { type: 'string' } } },
  },
];

describe('openai model provider, against a fake OpenAI-compatible server', () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await startFakeOpenAI();
  });
  afterEach(() => fake.close());

  const provider = (timeoutMs = 5_000) =>
    new OpenAIModelProvider(
      { baseURL: fake.baseURL, apiKey: 'sk-test-not-a-real-key', timeoutMs },
      'fake-model',
    );
  const request = (onText: (d: string) => void = () => undefined): ModelRequest => ({
    messages: [{ role: 'user', text: 'hi', media: [{ kind: 'image', url: 'https://example.com/a.png' }] }],
    tools: TOOLS,
    onText,
    signal: new AbortController().signal,
  });

  it('streams text piece by piece and sends the model, the key, the messages and the tools', async () => {
    fake.script({ kind: 'stream', text: ['Hel', 'lo ', 'there'] });
    const pieces: string[] = [];
    const reply = await provider().complete(request((d) => pieces.push(d)));
    assert.deepEqual(pieces, ['Hel', 'lo ', 'there']);
    assert.deepEqual(reply, { text: 'Hello there', toolCalls: [] });
    const sent = fake.requests[0];
    assert.equal(sent?.authorization, 'Bearer sk-test-not-a-real-key');
    assert.equal(sent?.body.model, 'fake-model');
    assert.equal(sent?.body.stream, true);
    assert.deepEqual(
      (sent?.body.tools as { function: { name: string } }[]).map((t) => t.function.name),
      ['ai_image_2'],
    );
    const user = (sent?.body.messages as { role: string; content: unknown }[])[1];
    assert.deepEqual(user, {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    });
  });

  it('assembles tool calls whose arguments arrive in pieces', async () => {
    fake.script({
      kind: 'stream',
      toolCalls: [{ id: 'call_a', name: 'ai_image_2', argumentChunks: ['{"prom', 'pt":"a ', 'cat"}'] }],
    });
    const reply = await provider().complete(request());
    assert.deepEqual(reply.toolCalls, [{ id: 'call_a', toolName: 'ai_image_2', input: { prompt: 'a cat' } }]);
  });

  it('passes malformed tool arguments on, marked, for the tool schema to refuse', async () => {
    fake.script({
      kind: 'stream',
      toolCalls: [{ id: 'call_b', name: 'ai_image_2', argumentChunks: ['{"prompt": '] }],
    });
    const reply = await provider().complete(request());
    assert.deepEqual(reply.toolCalls[0]?.input, { malformed_arguments: '{"prompt": ' });
  });

  it('treats 429 and 500 as retryable and a 400 as permanent', async () => {
    fake.script(
      { kind: 'error', status: 429 },
      { kind: 'error', status: 500 },
      { kind: 'error', status: 400 },
    );
    for (const status of [429, 500]) {
      const err = await provider()
        .complete(request())
        .then(
          () => assert.fail('expected a failure'),
          (e: unknown) => e,
        );
      assert.ok(!(err instanceof ApplicationFailure), `${status} must be retryable`);
    }
    const permanent = await provider()
      .complete(request())
      .then(
        () => assert.fail('expected a failure'),
        (e: unknown) => e,
      );
    assert.ok(permanent instanceof ApplicationFailure && permanent.nonRetryable);
    assert.equal(permanent.type, 'PROVIDER_ERROR');
    assert.equal(fake.requests.length, 3, 'the client itself does not retry; Temporal does');
  });

  it('times out a provider that never answers', async () => {
    fake.script({ kind: 'hang' });
    const started = Date.now();
    await assert.rejects(
      provider(300).complete(request()),
      (e: unknown) => !(e instanceof ApplicationFailure),
    );
    assert.ok(Date.now() - started < 5_000);
  });

  /** One turn sent through a real gateway and worker on the fake: its snapshot once it has ended. */
  const turnOnFake = async (): Promise<{ status: string; text: string }> => {
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `openai-${randomUUID()}`,
      MODEL_PROVIDER: 'openai',
      OPENAI_BASE_URL: fake.baseURL,
      OPENAI_API_KEY: 'sk-test-not-a-real-key',
      OPENAI_MODEL: 'fake-model',
    });
    const worker = await startWorker({ config, deps: { model: createModelProvider(config) } });
    const gateway = await startGateway({ config });
    try {
      const user = await createTestUser();
      const turn = (await (
        await fetch(`${gateway.url}/api/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...user.bearer },
          body: JSON.stringify({ text: 'hello' }),
        })
      ).json()) as { chatId: string; runId: string };
      return await waitFor(
        async () => {
          const s = (await (
            await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
              headers: user.bearer,
            })
          ).json()) as { status: string; text: string };
          return ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status) ? s : undefined;
        },
        { what: 'the run', timeoutMs: 60_000 },
      );
    } finally {
      await gateway.close();
      await worker.stop();
    }
  };

  it('completes a run through Temporal retries after a 429 and a 500', async () => {
    fake.script(
      { kind: 'error', status: 429 },
      { kind: 'error', status: 500 },
      { kind: 'stream', text: ['Recovered.'] },
    );
    const done = await turnOnFake();
    assert.equal(done.status, 'COMPLETE');
    assert.equal(done.text, 'Recovered.');
    assert.equal(fake.requests.length, 3);
  });

  it('stores a reply PostgreSQL could not hold as it stands (a NUL, half of a character), and completes', async () => {
    // The pair of an emoji split across two pieces is whole again in the reply.
    fake.script({ kind: 'stream', text: ['a\u0000b ', '\ud83d', '\ude00 c \ud800'] });
    const done = await turnOnFake();
    assert.equal(done.status, 'COMPLETE');
    assert.equal(done.text, 'a\ufffdb \u{1f600} c \ufffd');
  });
});
