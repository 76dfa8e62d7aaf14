import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { loadConfig } from '../../core/config/config';
import type { Database } from '../../core/db/client';
import { createLogger } from '../../core/logging/logger';
import { createGuardedHttp } from '../../core/net/guarded-http-client';
import type { ObjectStorage } from '../../core/storage/storage';
import { signedFileUrl } from '../../core/storage/signing';
import { runAiImage } from '../../core/tools/ai-image';
import { parseToolInput } from '../../core/tools/registry';
import type { ToolContext } from '../../core/tools/types';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';
import { noisePng, solidPng, startFakePredictionServer } from '../support/fake-providers';

/** Whose the outputs are: a real user, whose storage quota each output counts against. */
let owner: { db: Database; userId: string };
/** Where a call's first image is stored. */
const firstImage = () => `tools/${owner.userId}/call-1/image-1.png`;

/** Objects in a map: these tests check what a provider stores, not a storage driver. */
function memoryStorage(): ObjectStorage & { objects: Map<string, { body: Buffer; contentType: string }> } {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  return {
    driver: 'local',
    objects,
    async put(key, body, { contentType }) {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.concat(await body.toArray());
      objects.set(key, { body: bytes, contentType });
      return { size: bytes.length };
    },
    async stat(key) {
      const o = objects.get(key);
      if (!o) throw new Error('missing');
      return { contentType: o.contentType, size: o.body.length, etag: '"x"', lastModified: new Date(0) };
    },
    async get(key) {
      const o = objects.get(key);
      if (!o) throw new Error('missing');
      return { ...(await this.stat(key)), body: Readable.from([o.body]) };
    },
    async delete(key) {
      objects.delete(key);
    },
    url: (key) => `https://files.example/${key}`,
  };
}

function context(env: Record<string, string>, storage = memoryStorage()) {
  const config = loadConfig({
    DATABASE_URL: 'postgresql://unused/unused',
    APP_SECRET: 'x'.repeat(32),
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ...env,
  });
  const ctx: ToolContext = {
    config,
    db: owner.db,
    storage,
    http: createGuardedHttp(config),
    logger: createLogger({ level: 'silent', name: 'test' }),
    userId: owner.userId,
    toolCallId: 'call-1',
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    previous: undefined,
  };
  return { ctx, storage };
}

describe('ai_image_2 providers', () => {
  before(async () => {
    owner = { db: (await testStack()).db, userId: (await createTestUser()).userId };
  });

  it('local-preview makes a real, deterministic PNG of the asked shape', async () => {
    const input = parseToolInput('ai_image_2', { prompt: 'a lighthouse', aspect_ratio: '16:9', seed: 3 });
    const a = context({ IMAGE_PROVIDER: 'local-preview' });
    const b = context({ IMAGE_PROVIDER: 'local-preview' });
    const first = await runAiImage(input, a.ctx);
    await runAiImage(input, b.ctx);
    assert.equal(first.output.provider, 'local-preview');
    const stored = a.storage.objects.get(firstImage());
    assert.ok(stored);
    assert.ok(stored.body.equals(b.storage.objects.get(firstImage())?.body ?? Buffer.alloc(0)));
    const meta = await sharp(stored.body).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 768, 432]);
    const other = context({ IMAGE_PROVIDER: 'local-preview' });
    await runAiImage(
      parseToolInput('ai_image_2', { prompt: 'a lighthouse', aspect_ratio: '16:9', seed: 4 }),
      other.ctx,
    );
    assert.ok(!other.storage.objects.get(firstImage())?.body.equals(stored.body));
  });

  it('prediction: a retried attempt polls the job its heartbeat recorded, starting none', async () => {
    const fake = await startFakePredictionServer({ pollsBeforeDone: 2 });
    try {
      const env = {
        IMAGE_PROVIDER: 'prediction',
        PREDICTION_API_URL: fake.url,
        PROVIDER_POLL_INTERVAL: '10ms',
      };
      const input = parseToolInput('ai_image_2', { prompt: 'a boat' });
      const first = context(env);
      const beats: unknown[] = [];
      first.ctx.heartbeat = (details) => beats.push(details);
      const done = await runAiImage(input, first.ctx);
      assert.deepEqual(beats[0], {
        providerRunId: done.providerRunId,
        pollUrl: `${fake.url}/predictions/${done.providerRunId}`,
      });

      const retry = context(env);
      retry.ctx.previous = beats[0] as ToolContext['previous'];
      const again = await runAiImage(input, retry.ctx);
      assert.equal(again.providerRunId, done.providerRunId);
      assert.equal(fake.created.length, 1, 'no second job is started');
    } finally {
      await fake.close();
    }
  });

  it('prediction: sends its token only to PREDICTION_API_URL, not to poll URLs the provider names elsewhere', async () => {
    const elsewhere: (string | undefined)[] = [];
    const other = createServer((req, res) => {
      elsewhere.push(req.headers.authorization);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const fake = await startFakePredictionServer({
      pollsBeforeDone: 2,
      urlsAt: `http://127.0.0.1:${(other.address() as AddressInfo).port}`,
    });
    try {
      const { ctx } = context({
        IMAGE_PROVIDER: 'prediction',
        PREDICTION_API_URL: fake.url,
        PREDICTION_API_TOKEN: 'r8_secret-token',
        PROVIDER_POLL_INTERVAL: '10ms',
      });
      const beats: unknown[] = [];
      ctx.heartbeat = (details) => beats.push(details);
      const done = await runAiImage(parseToolInput('ai_image_2', { prompt: 'a boat' }), ctx);
      assert.equal(fake.predictions.get(done.providerRunId)?.polls, 2, 'polled where the API is');
      assert.deepEqual(beats[0], {
        providerRunId: done.providerRunId,
        pollUrl: `${fake.url}/predictions/${done.providerRunId}`,
      });
      assert.deepEqual(elsewhere, []);
    } finally {
      await fake.close();
      other.close();
    }
  });

  it("prediction: hands the provider a file URL of ours only when it names the caller's own file", async () => {
    const fake = await startFakePredictionServer({ pollsBeforeDone: 1 });
    try {
      const { ctx } = context({
        IMAGE_PROVIDER: 'prediction',
        PREDICTION_API_URL: fake.url,
        PROVIDER_POLL_INTERVAL: '10ms',
        PUBLIC_BASE_URL: 'https://chat.example.test',
      });
      const theirs = signedFileUrl(ctx.config, `attachments/${randomUUID()}/picture`);
      await assert.rejects(
        runAiImage(parseToolInput('ai_image_2', { prompt: 'a boat', image_url: theirs }), ctx),
        { type: 'MEDIA_UNAVAILABLE', nonRetryable: true, message: 'The image: the URL may not be fetched.' },
      );
      assert.equal(fake.created.length, 0, 'the provider is not asked');
      const mine = signedFileUrl(ctx.config, `attachments/${ctx.userId}/picture`);
      await runAiImage(parseToolInput('ai_image_2', { prompt: 'a boat', image_url: mine }), ctx);
      assert.deepEqual((fake.created[0]?.body as { input: { image_input: string[] } }).input.image_input, [
        mine,
      ]);
    } finally {
      await fake.close();
    }
  });

  describe('openai', () => {
    let server: Server;
    let url: string;
    const requests: { path: string; contentType: string | undefined; body: string }[] = [];
    let status = 200;

    before(async () => {
      const png = await solidPng(16, 16, { r: 1, g: 2, b: 3 });
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests.push({
            path: req.url ?? '',
            contentType: req.headers['content-type'],
            body: Buffer.concat(chunks).toString('latin1'),
          });
          if (status !== 200)
            return void res
              .writeHead(status, { 'content-type': 'application/json' })
              .end('{"error":{"message":"no"}}');
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ created: 1700000000, data: [{ b64_json: png.toString('base64') }] }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    after(() => server.close());

    const env = () => ({ IMAGE_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: url });

    it('generates through the Images API', async () => {
      status = 200;
      const { ctx, storage } = context(env());
      const out = await runAiImage(
        parseToolInput('ai_image_2', { prompt: 'a cat', aspect_ratio: '9:16' }),
        ctx,
      );
      assert.equal(out.output.provider, 'openai');
      const last = requests.at(-1);
      assert.equal(last?.path, '/v1/images/generations');
      assert.deepEqual(JSON.parse(last?.body ?? '{}'), {
        model: 'gpt-image-1',
        prompt: 'a cat',
        size: '1024x1536',
        n: 1,
      });
      assert.ok(storage.objects.has(firstImage()));
    });

    it('edits when image_url is given, sending the image as a file', async () => {
      status = 200;
      const imageServer = createServer(async (_req, res) =>
        res.end(await solidPng(8, 8, { r: 9, g: 9, b: 9 })),
      );
      await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
      try {
        const imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/in.png`;
        const { ctx } = context(env());
        await runAiImage(parseToolInput('ai_image_2', { prompt: 'make it blue', image_url: imageUrl }), ctx);
        const last = requests.at(-1);
        assert.equal(last?.path, '/v1/images/edits');
        assert.match(last?.contentType ?? '', /^multipart\/form-data/);
        assert.match(last?.body ?? '', /make it blue/);
      } finally {
        imageServer.close();
      }
    });

    it('refuses an image it cannot decode with a permanent 415, before calling OpenAI', async () => {
      const imageServer = createServer(async (_req, res) =>
        res.end((await noisePng(64, 64)).subarray(0, 1500)),
      );
      await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
      try {
        const imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/in.png`;
        const { ctx } = context(env());
        const calls = requests.length;
        await assert.rejects(
          runAiImage(parseToolInput('ai_image_2', { prompt: 'make it blue', image_url: imageUrl }), ctx),
          { type: 'UNSUPPORTED_MEDIA_TYPE', nonRetryable: true },
        );
        assert.equal(requests.length, calls, 'OpenAI is not called');
      } finally {
        imageServer.close();
      }
    });

    it('turns a 4xx into a permanent PROVIDER_ERROR and a 5xx into a retryable error', async () => {
      const { ctx } = context(env());
      const input = parseToolInput('ai_image_2', { prompt: 'x' });
      status = 400;
      await assert.rejects(runAiImage(input, ctx), { type: 'PROVIDER_ERROR', nonRetryable: true });
      status = 503;
      await assert.rejects(runAiImage(input, ctx), (err: Error) => !('nonRetryable' in err));
    });
  });
});
