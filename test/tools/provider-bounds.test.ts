import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';
import {
  startFakeImagesApi,
  startFakePredictionServer,
  startMediaServer,
  testVideo,
} from '../support/fake-providers';
import { latestToolCall } from '../support/tool-calls';
import { waitFor } from '../support/wait';

const MIB = 1024 * 1024;
/** merge_videos may write this much here: two short clips merged are more. */
const MERGE_OUTPUT_CAP = 20_000;

/**
 * Issue 45, finding 10: every provider answer and output is bounded before it is read or decoded.
 * Loopback fakes of the providers answer past each limit; each call fails with a clear error,
 * stores nothing and charges nothing, and no answer is read whole first.
 */
describe('provider answers and outputs, bounded before they are read', function () {
  this.timeout(180_000);
  let storageDir: string;
  let prediction: Awaited<ReturnType<typeof startFakePredictionServer>>;
  let images: Awaited<ReturnType<typeof startFakeImagesApi>>;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  const services: { gateway: TestGateway; worker: TestWorker }[] = [];
  let viaPrediction: TestGateway;
  let viaImagesApi: TestGateway;
  let user: TestUser;

  /** A worker and a gateway of their own task queue, on `env`. */
  async function service(env: Record<string, string>): Promise<TestGateway> {
    const config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `provider-bounds-${randomUUID()}`,
      STORAGE_LOCAL_DIR: storageDir,
      TOOL_ROUTE_TIMEOUT: '60s',
      PROVIDER_POLL_INTERVAL: '100ms',
      ...env,
    });
    const started = { worker: await startWorker({ config }), gateway: await startGateway({ config }) };
    services.push(started);
    return started.gateway;
  }

  before(async () => {
    storageDir = await mkdtemp(path.join(tmpdir(), 'provider-bounds-'));
    prediction = await startFakePredictionServer({ pollsBeforeDone: 1 });
    images = await startFakeImagesApi();
    media = await startMediaServer();
    viaPrediction = await service({ IMAGE_PROVIDER: 'prediction', PREDICTION_API_URL: prediction.url });
    viaImagesApi = await service({
      IMAGE_PROVIDER: 'openai',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: images.url,
      MERGE_MAX_OUTPUT_BYTES: String(MERGE_OUTPUT_CAP),
    });
    user = await createTestUser();
  });
  after(async () => {
    for (const { gateway, worker } of services) {
      await gateway.close();
      await worker.stop();
    }
    await prediction?.close();
    await images?.close();
    await media?.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const post = async (gateway: TestGateway, tool: string, body: unknown) => {
    const res = await fetch(`${gateway.url}/api/v1/tools/${tool}`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { code?: string; error?: string } };
  };

  /** The user's latest call failed, charged nothing, and left no object in storage. */
  async function assertNothingKept(gateway: TestGateway): Promise<void> {
    const call = await latestToolCall(gateway.deps.db.pool, user.userId);
    assert.equal(call?.status, 'FAILED');
    assert.equal(call?.charges, '0', 'nothing charged');
    const stored = await readdir(path.join(storageDir, 'objects', 'tools', user.userId)).catch(
      (): string[] => [],
    );
    assert.ok(!stored.includes(call?.id ?? ''), 'nothing stored');
  }

  const floods = [
    {
      name: 'prediction',
      cap: '1 MiB',
      sentBelow: 16 * MIB,
      at: () => ({ gateway: viaPrediction, fake: prediction }),
    },
    {
      name: 'Images API',
      cap: '32 MiB',
      sentBelow: 48 * MIB,
      at: () => ({ gateway: viaImagesApi, fake: images }),
    },
  ];
  for (const flood of floods) {
    it(`${flood.name}: cuts an endless answer at ${flood.cap}, 502 PROVIDER_ERROR, nothing kept`, async () => {
      const { gateway, fake } = flood.at();
      const before = fake.flooded.length;
      const res = await post(gateway, 'ai_image_2', { prompt: 'flood the worker' });
      const sent = await waitFor(async () => fake.flooded[before], { what: 'the flood to end' });
      assert.ok(sent < flood.sentBelow, `the provider sent ${sent} bytes before the worker hung up`);
      assert.equal(res.status, 502, JSON.stringify(res.body));
      assert.equal(res.body.code, 'PROVIDER_ERROR');
      assert.match(res.body.error ?? '', new RegExp(`answer is larger than ${flood.cap}`));
      await assertNothingKept(gateway);
    });
  }

  it('Images API: refuses an image of more than 100 megapixels undecoded, 502, nothing kept', async () => {
    const res = await post(viaImagesApi, 'ai_image_2', { prompt: 'bomb' });
    assert.equal(res.status, 502, JSON.stringify(res.body));
    assert.deepEqual(res.body, { error: 'The generated image could not be used.', code: 'PROVIDER_ERROR' });
    await assertNothingKept(viaImagesApi);
  });

  it('merge_videos: stops writing at MERGE_MAX_OUTPUT_BYTES, 413 naming it, nothing kept', async () => {
    const clip = await testVideo({ width: 320, height: 240, fps: 25, seconds: 2, audio: true });
    const url = media.add('clip.mp4', clip, 'video/mp4');
    const res = await post(viaImagesApi, 'merge_videos', { video_urls: [url, url] });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
    assert.match(res.body.error ?? '', /larger than 20000 bytes.*\(MERGE_MAX_OUTPUT_BYTES\)/);
    await assertNothingKept(viaImagesApi);
  });
});
