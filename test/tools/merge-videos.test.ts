import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../../core/config/config';
import type { ToolResult } from '../../core/schemas/events';
import { createTestUser, type TestUser } from '../../testkit/users';
import {
  meanDifference,
  probeFile,
  startMediaServer,
  testVideo,
  videoFrame,
} from '../support/fake-providers';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { waitFor } from '../support/wait';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';

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
      // The widest clip below is shown 1280 wide (640 at a 2:1 pixel aspect ratio).
      MERGE_MAX_INPUT_SIDE: '1280',
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
    return {
      status: res.status,
      body: (await res.json()) as { code?: string; error?: string; output: Record<string, unknown> },
    };
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
    return { ...(await probeFile(file)), file };
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

  it('refuses inputs longer than MERGE_MAX_INPUT_SECONDS (4 s here) in all with 413, at once', async () => {
    const hits = media.hits(urls[0] ?? '');
    const res = await merge({ video_urls: [urls[0], urls[1], urls[0]] });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
    assert.match(String(res.body.error), /at most 4 s \(MERGE_MAX_INPUT_SECONDS\)/);
    assert.equal(media.hits(urls[0] ?? ''), hits + 2, 'each URL fetched once');
  });

  it('refuses a video wider or taller than MERGE_MAX_INPUT_SIDE (1280 here) with 413, before decoding it', async () => {
    const wide = await testVideo({ width: 1296, height: 64, fps: 24, seconds: 0.5, audio: false });
    const res = await merge({
      video_urls: [urls[2], media.add(`wide-${randomUUID()}.mp4`, wide, 'video/mp4')],
    });
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
    assert.match(
      String(res.body.error),
      /Video 2 is 1296x64; at most 1280 pixels a side \(MERGE_MAX_INPUT_SIDE\)/,
    );
  });

  it('refuses a video that cannot be read with 415, fetching it once', async () => {
    const clip = await testVideo({ width: 160, height: 120, fps: 24, seconds: 1, audio: false });
    const broken = media.add('broken.mp4', clip.subarray(0, Math.floor(clip.length / 2)), 'video/mp4');
    const res = await merge({ video_urls: [urls[0], broken] });
    assert.equal(res.status, 415, JSON.stringify(res.body));
    assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(String(res.body.error), /Video 2/);
    assert.equal(media.hits(broken), 1);
  });

  describe('geometry: the output is what a viewer sees', () => {
    /** Writes a clip to disk (for frame comparisons) and serves it. */
    const clip = async (name: string, options: Parameters<typeof testVideo>[0]) => {
      const bytes = await testVideo(options);
      const file = path.join(dir, name);
      await writeFile(file, bytes);
      return { file, url: media.add(name, bytes, 'video/mp4') };
    };
    const assertSamePicture = async (
      expected: { file: string; atS: number },
      actual: { file: string; atS: number },
      width: number,
      height: number,
    ) => {
      const difference = meanDifference(
        await videoFrame(expected.file, expected.atS, width, height),
        await videoFrame(actual.file, actual.atS, width, height),
      );
      assert.ok(difference < 12, `the pictures differ by ${difference.toFixed(1)} on average`);
    };

    it('applies a display rotation: a 640x480 clip turned 90° comes out 480x640, filling the frame', async () => {
      const rotated = await clip('rotated.mp4', {
        width: 640,
        height: 480,
        fps: 25,
        seconds: 1,
        audio: false,
        rotate: 90,
      });
      const res = await merge({ video_urls: [rotated.url, rotated.url] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const out = await probeResult();
      assert.deepEqual([out.width, out.height, out.rotation], [480, 640, 0]);
      assert.deepEqual([res.body.output.width, res.body.output.height], [480, 640]);
      await assertSamePicture({ file: rotated.file, atS: 0.5 }, { file: out.file, atS: 0.5 }, 480, 640);
    });

    it('keeps the display aspect ratio of non-square pixels: 640x480 at SAR 2:1 comes out 1280x480', async () => {
      const wide = await clip('sar.mp4', {
        width: 640,
        height: 480,
        fps: 25,
        seconds: 1,
        audio: true,
        sar: [2, 1],
      });
      const res = await merge({ video_urls: [wide.url, wide.url] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const out = await probeResult();
      assert.deepEqual([out.width, out.height, out.sar, out.dar], [1280, 480, '1:1', '8:3']);
      await assertSamePicture({ file: wide.file, atS: 0.5 }, { file: out.file, atS: 1.5 }, 1280, 480);
    });

    it('fits clips of other shapes inside the first one’s frame, undistorted, on black bars', async () => {
      const landscape = await clip('landscape.mp4', {
        width: 640,
        height: 360,
        fps: 25,
        seconds: 1,
        audio: false,
      });
      const portrait = await clip('portrait.mp4', {
        width: 640,
        height: 480,
        fps: 25,
        seconds: 1,
        audio: false,
        rotate: 270,
      });
      const res = await merge({ video_urls: [landscape.url, portrait.url, landscape.url] });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const out = await probeResult();
      assert.deepEqual([out.width, out.height, out.sar], [640, 360, '1:1']);
      // The portrait clip (480x640 on screen) is scaled to 270x360 and centred: bars 185 px wide.
      const frame = await videoFrame(out.file, 1.5, 640, 360);
      const column = (x: number) => {
        const values: number[] = [];
        for (let y = 0; y < 360; y += 8)
          values.push(...frame.subarray((y * 640 + x) * 3, (y * 640 + x) * 3 + 3));
        return Math.max(...values);
      };
      for (const x of [0, 90, 180, 460, 550, 639]) assert.ok(column(x) < 40, `column ${x} is black`);
      for (const x of [200, 320, 440]) assert.ok(column(x) > 100, `column ${x} shows the picture`);
      const middle = Buffer.alloc(270 * 360 * 3);
      for (let y = 0; y < 360; y++) frame.copy(middle, y * 270 * 3, (y * 640 + 185) * 3, (y * 640 + 455) * 3);
      const source = await videoFrame(portrait.file, 0.5, 270, 360);
      const difference = meanDifference(source, middle);
      assert.ok(difference < 16, `the portrait picture differs by ${difference.toFixed(1)} on average`);
    });
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

describe('merge_videos: limits and cleanup', function () {
  this.timeout(180_000);
  let dir: string;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let user: TestUser;
  let clip: Buffer;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'merge-limits-test-'));
    media = await startMediaServer();
    user = await createTestUser();
    clip = await testVideo({ width: 160, height: 120, fps: 24, seconds: 1, audio: false });
  });
  after(async () => {
    await media?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A worker and a gateway of their own (their own task queue), on these config overrides. */
  const service = async (overrides: Record<string, string>, gatewayOverrides: Partial<Config> = {}) => {
    const config = (await testStack()).config({
      STORAGE_LOCAL_DIR: path.join(dir, 'storage'),
      TEMPORAL_TASK_QUEUE: `merge-limits-${randomUUID()}`,
      ...overrides,
    });
    const worker = await startWorker({ config });
    const gateway = await startGateway({ config: { ...config, ...gatewayOverrides } });
    return {
      merge: async (body: unknown) => {
        const started = Date.now();
        const res = await fetch(`${gateway.url}/api/v1/tools/merge_videos`, {
          method: 'POST',
          headers: { ...user.bearer, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return {
          status: res.status,
          body: (await res.json()) as { code?: string; error?: string },
          ms: Date.now() - started,
        };
      },
      stop: async () => {
        await gateway.close();
        await worker.stop();
      },
    };
  };

  it('refuses videos over MERGE_MAX_TOTAL_BYTES together from their Content-Length, downloading none', async () => {
    const limit = Math.floor(clip.length * 2.5);
    const svc = await service({ MERGE_MAX_TOTAL_BYTES: String(limit) });
    try {
      const urls = [0, 1, 2].map((i) => media.add(`total-${i}.mp4`, clip, 'video/mp4'));
      const res = await svc.merge({ video_urls: urls });
      assert.equal(res.status, 413, JSON.stringify(res.body));
      assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
      assert.match(
        res.body.error ?? '',
        new RegExp(`at most ${limit} bytes in all \\(MERGE_MAX_TOTAL_BYTES\\)`),
      );
      // Each URL was asked once, and its body left unread: the refusal came from the headers.
      assert.deepEqual(
        urls.map((u) => media.hits(u)),
        [1, 1, 1],
      );

      // A server that does not say its size is stopped once the bytes pass the total.
      const chunked = [0, 1, 2].map((i) =>
        media.add(`chunked-${i}.mp4`, clip, 'video/mp4', { chunked: true }),
      );
      const counted = await svc.merge({ video_urls: chunked });
      assert.equal(counted.status, 413, JSON.stringify(counted.body));
      assert.match(counted.body.error ?? '', /MERGE_MAX_TOTAL_BYTES/);

      // Under the total, the same videos merge.
      const ok = await svc.merge({ video_urls: urls.slice(0, 2) });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
    } finally {
      await svc.stop();
    }
  });

  it('kills the whole ffmpeg process tree when the call ends (504 TIMEOUT)', async () => {
    // ffmpeg behind a wrapper that runs it as a child, as a nice, timeout or container wrapper
    // would: stopping the wrapper alone leaves ffmpeg running. Its children carry the marker. A
    // wrapper that outlives ffmpeg writes its exit status, which tells a kill (none, or a signal's)
    // from ffmpeg finishing on its own (0).
    const marker = path.join(dir, `ffmpeg-wrapper-${randomUUID()}`);
    await writeFile(
      marker,
      '#!/bin/bash\n(exec -a "$0.ffmpeg" ffmpeg "$@")\nstatus=$?\necho "$status" > "$0.exit"\nexit "$status"\n',
      { mode: 0o755 },
    );
    const running = async () => {
      const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
      const found: string[] = [];
      for (const pid of pids) {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (cmdline.includes(marker)) found.push(pid);
      }
      return found;
    };
    // Three minutes of video, twice: far more encoding than the route's window, however fast the machine.
    const long = path.join(dir, 'long.mp4');
    await writeFile(
      path.join(dir, 'short.mp4'),
      await testVideo({ width: 640, height: 480, fps: 30, seconds: 2, audio: false }),
    );
    await promisify(execFile)('ffmpeg', [
      '-v',
      'error',
      '-stream_loop',
      '89',
      '-i',
      path.join(dir, 'short.mp4'),
      '-c',
      'copy',
      long,
    ]);
    const url = media.add('long.mp4', await readFile(long), 'video/mp4');

    const svc = await service({ FFMPEG_PATH: marker }, { TOOL_ROUTE_TIMEOUT: 8_000 });
    try {
      const answer = svc.merge({ video_urls: [url, url] });
      // ffmpeg starts once both videos are fetched and probed, well inside the window.
      await waitFor(async () => ((await running()).length > 0 ? true : undefined), {
        timeoutMs: 8_000,
        intervalMs: 100,
        what: 'ffmpeg to start',
      });
      const res = await answer;
      assert.equal(res.status, 504, JSON.stringify(res.body));
      assert.equal(res.body.code, 'TIMEOUT');
      // The cancellation reaches the activity with a heartbeat's answer, within a few seconds; it
      // may already have, so what ffmpeg was doing then is read from how it ended, not from /proc.
      await waitFor(async () => ((await running()).length === 0 ? true : undefined), {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: 'no ffmpeg process to be left',
      });
      const status = await readFile(`${marker}.exit`, 'utf8').catch(() => 'none (killed with ffmpeg)');
      assert.notEqual(status.trim(), '0', 'ffmpeg finished on its own before the route gave up');
    } finally {
      await svc.stop();
    }
  });
});
