/**
 * ffmpeg and ffprobe read files users sent: they get no secret of the worker, no network, no
 * playlist or concat demuxer that opens further files, and bounded time and memory.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../core/config/config';
import { ProgramTimeoutError, runProgram } from '../../core/process/run-program';
import { probe } from '../../core/tools/merge-videos';
import { testVideo } from '../support/fake-providers';
import { testStack } from '../../testkit/stack';

const LIMITS = { timeoutMs: 10_000, maxMemoryBytes: 1024 * 1024 * 1024 };

describe('ffmpeg and ffprobe sandbox', function () {
  this.timeout(60_000);
  let dir: string;
  let config: Config;
  let canary: { server: Server; port: number; hits: number };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ffmpeg-sandbox-'));
    config = (await testStack()).config();
    const server = createServer((_req, res) => {
      canary.hits++;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    canary = { server, port: (server.address() as AddressInfo).port, hits: 0 };
  });
  after(async () => {
    canary?.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs a program with an empty environment: no secret of the worker reaches it', async () => {
    process.env.SANDBOX_CANARY_SECRET = 'do-not-leak';
    try {
      const out = await runProgram('env', [], AbortSignal.timeout(10_000), LIMITS);
      // The shell that sets the memory ceiling exports its PWD; nothing else is there.
      const names = out
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('=')[0]);
      assert.deepEqual(
        names.filter((name) => name !== 'PWD'),
        [],
      );
    } finally {
      delete process.env.SANDBOX_CANARY_SECRET;
    }
  });

  it('caps the address space the program may map', async () => {
    const out = await runProgram('sh', ['-c', 'ulimit -v'], AbortSignal.timeout(10_000), {
      ...LIMITS,
      maxMemoryBytes: 64 * 1024 * 1024,
    });
    assert.equal(out.trim(), String(64 * 1024));
  });

  it('stops a program past its deadline', async () => {
    const started = Date.now();
    await assert.rejects(
      runProgram('sleep', ['30'], AbortSignal.timeout(20_000), { ...LIMITS, timeoutMs: 300 }),
      ProgramTimeoutError,
    );
    assert.ok(Date.now() - started < 5_000);
  });

  it('ffprobe does not follow a playlist to the network', async () => {
    const playlist = path.join(dir, 'clip.mp4');
    await writeFile(
      playlist,
      [
        '#EXTM3U',
        '#EXT-X-TARGETDURATION:1',
        '#EXTINF:1,',
        `http://127.0.0.1:${canary.port}/segment.ts`,
        '#EXT-X-ENDLIST',
        '',
      ].join('\n'),
    );
    assert.equal(await probe(config, playlist, AbortSignal.timeout(20_000)), undefined);
    assert.equal(canary.hits, 0);
  });

  it('ffprobe does not open a local file named inside a concat list', async () => {
    const secret = path.join(dir, 'elsewhere.mp4');
    await writeFile(secret, await testVideo({ width: 64, height: 48, fps: 10, seconds: 1, audio: false }));
    // The same file is readable when named directly: only the indirection is refused.
    assert.ok(await probe(config, secret, AbortSignal.timeout(20_000)));
    const list = path.join(dir, 'upload.mp4');
    // A relative name: the concat demuxer's own safe mode would refuse an absolute one anyway. With
    // its duration given, the list would read as a one-second video were the demuxer allowed.
    await writeFile(list, `ffconcat version 1.0\nfile '${path.basename(secret)}'\nduration 1\n`);
    assert.equal(await probe(config, list, AbortSignal.timeout(20_000)), undefined);
  });

  it('ffprobe does not open a local file named inside a playlist', async () => {
    const segment = path.join(dir, 'segment.mp4');
    await writeFile(segment, await testVideo({ width: 64, height: 48, fps: 10, seconds: 1, audio: false }));
    assert.ok(await probe(config, segment, AbortSignal.timeout(20_000)));
    // ffmpeg's HLS demuxer lets a local playlist name local files: only the format allow-list stops it.
    const playlist = path.join(dir, 'playlist.mp4');
    await writeFile(
      playlist,
      ['#EXTM3U', '#EXT-X-TARGETDURATION:1', '#EXTINF:1,', path.basename(segment), '#EXT-X-ENDLIST', ''].join(
        '\n',
      ),
    );
    assert.equal(await probe(config, playlist, AbortSignal.timeout(20_000)), undefined);
  });
});
