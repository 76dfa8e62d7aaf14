import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ToolResult } from '../../core/schemas/events';
import { createTestUser, type TestUser } from '../support/auth';
import { probeFile, startMediaServer, testVideo } from '../support/fake-providers';
import { startGateway, type TestGateway } from '../support/gateway';
import { testStack } from '../support/stack';
import { startWorker, type TestWorker } from '../support/worker';

describe('merge_videos', function () {
  this.timeout(180_000);
  let dir: string;
  let gateway: TestGateway;
  let worker: TestWorker;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let user: TestUser;
  let urls: string[];
  let ownTmp: string;
  const machineTmpdir = process.env.TMPDIR;

  before(async () => {
    const stack = await testStack();
    dir = await mkdtemp(path.join(tmpdir(), 'merge-test-'));
    // The tool works in os.tmpdir(): a folder of this block's own, so that what it leaves behind
    // is told apart from the work of other test runs on the same machine.
    ownTmp = path.join(dir, 'tmp');
    await mkdir(ownTmp);
    process.env.TMPDIR = ownTmp;
    // Three sizes, three frame rates, and a middle clip without audio.
    const clips = await Promise.all([
      testVideo({ width: 320, height: 240, fps: 25, seconds: 1.5, audio: true }),
      testVideo({ width: 640, height: 360, fps: 30, seconds: 1.2, audio: false }),
      testVideo({ width: 160, height: 120, fps: 24, seconds: 1, audio: true }),
    ]);
    media = await startMediaServer();
    urls = clips.map((clip, i) => media.add(`clip-${i}.mp4`, clip, 'video/mp4'));
    const config = stack.config({
      STORAGE_LOCAL_DIR: path.join(dir, 'storage'),
      MERGE_MAX_INPUT_SECONDS: '4',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    await media?.close();
    if (machineTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = machineTmpdir;
    await rm(dir, { recursive: true, force: true });
  });

  const merge = async (body: unknown) => {
    const res = await fetch(`${gateway.url}/api/v1/tools/merge_videos`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const probeResult = async () => {
    const { rows } = await gateway.deps.db.pool.query<{ id: string }>(
      `SELECT id FROM "ToolCall" WHERE "userId" = $1 ORDER BY "startedAt" DESC LIMIT 1`,
      [user.userId],
    );
    const object = await worker.deps.storage.get(`tools/${user.userId}/${rows[0]?.id}/merged.mp4`);
    const chunks: Buffer[] = [];
    for await (const c of object.body) chunks.push(c as Buffer);
    const file = path.join(dir, `${rows[0]?.id}.mp4`);
    await writeFile(file, Buffer.concat(chunks));
    return probeFile(file);
  };

  for (const [transition, expected] of [
    ['none', 1.5 + 1.2 + 1],
    ['fade', 1.5 + 1.2 + 1 - 2 * 0.5],
    ['dissolve', 1.5 + 1.2 + 1 - 2 * 0.5],
  ] as const) {
    it(`joins three different clips with transition ${transition}`, async () => {
      const res = await merge({ video_urls: urls, transition, transition_duration: 0.5 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const result = res.body as unknown as ToolResult;
      assert.equal(result.output.provider, 'ffmpeg');
      assert.equal(result.assets[0]?.mimeType, 'video/mp4');
      assert.equal(result.creditCost, '5');
      const probed = await probeResult();
      assert.deepEqual(probed.streams, ['audio', 'video']);
      assert.deepEqual([probed.width, probed.height], [320, 240]);
      assert.ok(
        Math.abs(probed.durationS - expected) < 0.2,
        `duration ${probed.durationS}, expected about ${expected}`,
      );
    });
  }

  it('refuses inputs longer than MERGE_MAX_INPUT_SECONDS (4 s here) in all', async () => {
    const res = await merge({ video_urls: [urls[0], urls[1], urls[0]] });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_REQUEST');
  });

  it('leaves no temporary files behind', async () => {
    const left = (await readdir(ownTmp)).filter((name) => name.startsWith('merge-videos-'));
    assert.deepEqual(left, []);
  });

  it('refuses a URL that is not a video', async () => {
    const res = await merge({
      video_urls: [urls[0], media.add('text.mp4', Buffer.from('not a video at all'))],
    });
    assert.equal(res.status, 415);
    assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers 400 INVALID_REQUEST for one video or a bad transition', async () => {
    for (const body of [
      { video_urls: [urls[0]] },
      { video_urls: urls, transition: 'wipe' },
      { video_urls: urls, transition_duration: 5 },
    ]) {
      const res = await merge(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_REQUEST');
    }
  });
});
