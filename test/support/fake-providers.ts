import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { preparedCommand } from '../../testkit/prepared';

const exec = promisify(execFile);

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Serves fixed bytes at chosen paths on loopback: the "remote" images and videos of a test. It
 * counts the requests for each path; on request it sends a file without Content-Length, or
 * answers its first requests with 503.
 */
export async function startMediaServer() {
  const files = new Map<string, { body: Buffer; type: string; chunked: boolean; failFirst: number }>();
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const seen = (requests.get(url) ?? 0) + 1;
    requests.set(url, seen);
    const file = files.get(url);
    if (!file) return void res.writeHead(404).end();
    if (seen <= file.failFirst) return void res.writeHead(503).end();
    if (file.chunked) {
      res.writeHead(200, { 'content-type': file.type });
      res.write(file.body);
      return void res.end();
    }
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
  });
  const base = await listen(server);
  return {
    add(
      name: string,
      body: Buffer,
      type = 'application/octet-stream',
      options: { chunked?: boolean; failFirst?: number } = {},
    ) {
      files.set(`/${name}`, {
        body,
        type,
        chunked: options.chunked ?? false,
        failFirst: options.failFirst ?? 0,
      });
      return `${base}/${name}`;
    },
    /** How many requests the path of `url` has had. */
    hits: (url: string) => requests.get(new URL(url).pathname) ?? 0,
    close: () => close(server),
  };
}

/** The most a flooding fake sends: far past any limit of ours, short of filling a test's memory. */
const FLOOD_BYTES = 128 * 1024 * 1024;

/**
 * Answers 200 with JSON that never closes, as fast as the client reads it, until FLOOD_BYTES or
 * until the client hangs up; `sent` learns the bytes handed to the connection by then.
 */
async function flood(res: ServerResponse, sent: (bytes: number) => void): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"id":"flood","status":"starting","padding":"');
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let bytes = 0;
  while (bytes < FLOOD_BYTES && !res.destroyed) {
    bytes += chunk.length;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  sent(bytes);
  res.end();
}

export type PredictionBehaviour = 'succeed' | 'fail' | 'never' | 'reject' | 'flaky' | 'flood';

/**
 * A Replicate-style prediction API on loopback. The prompt picks the behaviour: a prompt starting
 * `fail` ends `failed`, `never` stays `processing`, `reject` answers 422 at creation, `flaky` answers
 * 503 to its first creation, `flood` answers its creation with endless JSON (`flooded` records how
 * much was sent before the client hung up); anything else succeeds after `pollsBeforeDone` polls
 * with an image the server also serves.
 */
export async function startFakePredictionServer(
  options: { pollsBeforeDone?: number; held?: boolean; urlsAt?: string } = {},
) {
  const pollsBeforeDone = options.pollsBeforeDone ?? 3;
  // Held: every prediction stays `processing` until release(), to keep a tool call in flight.
  let held = options.held ?? false;
  const predictions = new Map<string, { behaviour: PredictionBehaviour; polls: number; canceled: boolean }>();
  const created: { authorization?: string; body: unknown }[] = [];
  const image = await solidPng(64, 64, { r: 10, g: 200, b: 30 });
  const flakyPrompts = new Set<string>();
  const flooded: number[] = [];
  let next = 0;
  let base = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '';
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && url === '/predictions') {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { input: { prompt: string } };
        created.push({ authorization: req.headers.authorization, body });
        const prompt = body.input.prompt;
        const behaviour: PredictionBehaviour = prompt.startsWith('fail')
          ? 'fail'
          : prompt.startsWith('never')
            ? 'never'
            : prompt.startsWith('reject')
              ? 'reject'
              : prompt.startsWith('flaky')
                ? 'flaky'
                : prompt.startsWith('flood')
                  ? 'flood'
                  : 'succeed';
        if (behaviour === 'reject') return json(422, { detail: 'prompt refused' });
        if (behaviour === 'flood') return void flood(res, (bytes) => flooded.push(bytes));
        if (behaviour === 'flaky' && !flakyPrompts.has(prompt)) {
          flakyPrompts.add(prompt);
          return json(503, { detail: 'try again' });
        }
        const id = `pred-${++next}`;
        predictions.set(id, { behaviour, polls: 0, canceled: false });
        return json(201, {
          id,
          status: 'starting',
          // urlsAt: the poll and cancel URLs name another server, as a rewriting proxy might.
          urls: {
            get: `${options.urlsAt ?? base}/predictions/${id}`,
            cancel: `${options.urlsAt ?? base}/predictions/${id}/cancel`,
          },
        });
      }
      const match = /^\/predictions\/([\w-]+)(\/cancel)?$/.exec(url);
      const p = match?.[1] ? predictions.get(match[1]) : undefined;
      if (match && p) {
        const id = match[1] as string;
        if (match[2]) {
          p.canceled = true;
          return json(200, { id, status: 'canceled' });
        }
        p.polls++;
        const urls = { get: `${options.urlsAt ?? base}/predictions/${id}` };
        if (p.behaviour === 'never' || held || p.polls < pollsBeforeDone)
          return json(200, { id, status: 'processing', urls });
        if (p.behaviour === 'fail')
          return json(200, { id, status: 'failed', error: 'the model refused', urls });
        return json(200, { id, status: 'succeeded', output: [`${base}/output.png`], urls });
      }
      if (url === '/output.png') return void res.writeHead(200, { 'content-type': 'image/png' }).end(image);
      json(404, { detail: 'not found' });
    });
  });
  base = await listen(server);
  return {
    url: base,
    predictions,
    created,
    flooded,
    image,
    hold: () => void (held = true),
    release: () => void (held = false),
    close: () => close(server),
  };
}

/**
 * The OpenAI Images API on loopback (`/v1/images/generations`). The prompt picks the answer: one
 * starting `flood` is endless JSON (`flooded` records how much was sent before the client hung
 * up), `bomb` a valid PNG of 108 megapixels, past the 100 we decode; anything else a small PNG.
 */
export async function startFakeImagesApi() {
  const flooded: number[] = [];
  let bomb: Promise<Buffer> | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const prompt =
          (JSON.parse(Buffer.concat(chunks).toString() || '{}') as { prompt?: string }).prompt ?? '';
        if (prompt.startsWith('flood')) return flood(res, (bytes) => flooded.push(bytes));
        const png = prompt.startsWith('bomb')
          ? await (bomb ??= sharp({
              create: { width: 12_000, height: 9_000, channels: 3, background: '#123' },
            })
              .png({ compressionLevel: 1 })
              .toBuffer())
          : await solidPng(16, 16, { r: 1, g: 2, b: 3 });
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ created: 1_700_000_000, data: [{ b64_json: png.toString('base64') }] }));
      })();
    });
  });
  const base = await listen(server);
  return { url: `${base}/v1`, flooded, close: () => close(server) };
}

export function solidPng(
  width: number,
  height: number,
  rgb: { r: number; g: number; b: number },
): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: rgb } })
    .png()
    .toBuffer();
}

export const QUADRANT_COLOURS = {
  topLeft: [255, 0, 0],
  topRight: [0, 255, 0],
  bottomLeft: [0, 0, 255],
  bottomRight: [255, 255, 255],
} as const;

/** A PNG of random pixels: it does not compress, so its first bytes are only a part of it. */
export function noisePng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** An image in four flat quadrants, so a crop can be checked pixel by pixel. */
export async function quadrantImage(
  width: number,
  height: number,
  format: 'png' | 'webp' | 'jpeg' = 'png',
): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const colour =
        y < height / 2
          ? x < width / 2
            ? QUADRANT_COLOURS.topLeft
            : QUADRANT_COLOURS.topRight
          : x < width / 2
            ? QUADRANT_COLOURS.bottomLeft
            : QUADRANT_COLOURS.bottomRight;
      pixels.set(colour, (y * width + x) * 3);
    }
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  return (format === 'webp' ? image.webp({ lossless: true }) : image.toFormat(format)).toBuffer();
}

/**
 * A short test clip made by ffmpeg from its built-in sources. `sar` stores non-square pixels
 * (`[2, 1]`: each pixel twice as wide as tall); `rotate` adds a display rotation (degrees), which a
 * player applies and the coded size does not show.
 */
export async function testVideo(options: {
  width: number;
  height: number;
  fps: number;
  seconds: number;
  audio: boolean;
  sar?: [number, number];
  rotate?: 90 | 180 | 270;
}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'test-video-'));
  try {
    const out = path.join(dir, 'clip.mp4');
    const { width, height, fps, seconds, sar } = options;
    await exec(await preparedCommand('ffmpeg'), [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
      ...(options.audio
        ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=44100:duration=${seconds}`]
        : []),
      ...(sar ? ['-vf', `setsar=${sar[0]}/${sar[1]}`] : []),
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      ...(options.audio ? ['-c:a', 'aac'] : []),
      '-shortest',
      out,
    ]);
    if (options.rotate === undefined) return await readFile(out);
    // The mp4 muxer turns the stream's rotate tag into the display matrix players read.
    const rotated = path.join(dir, 'rotated.mp4');
    await exec('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      out,
      '-c',
      'copy',
      '-metadata:s:v:0',
      `rotate=${options.rotate}`,
      rotated,
    ]);
    return await readFile(rotated);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An animated WebP or GIF: one flat colour per frame, each frame `delayMs` long, looping. */
export function animatedImage(
  format: 'webp' | 'gif',
  width: number,
  height: number,
  colours: readonly (readonly [number, number, number])[],
  delayMs = 100,
): Promise<Buffer> {
  const frame = (rgb: readonly number[]) => {
    const pixels = Buffer.alloc(width * height * 3);
    for (let i = 0; i < width * height; i++) pixels.set(rgb, i * 3);
    return pixels;
  };
  const image = sharp(Buffer.concat(colours.map(frame)), {
    raw: { width, height: height * colours.length, channels: 3, pageHeight: height },
  });
  const delay = colours.map(() => delayMs);
  return (
    format === 'webp' ? image.webp({ lossless: true, loop: 0, delay }) : image.gif({ loop: 0, delay })
  ).toBuffer();
}

/** An animated PNG (APNG) of ffmpeg's test pattern: two frames. */
export async function animatedPng(width: number, height: number): Promise<Buffer> {
  const { stdout } = await exec(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${width}x${height}:rate=2:duration=1`,
      '-plays',
      '0',
      '-f',
      'apng',
      'pipe:1',
    ],
    { encoding: 'buffer' },
  );
  return stdout;
}

/** A 16-bit RGB PNG of a fine gradient, whose samples 8 bits cannot hold. */
export function png16(width: number, height: number): Promise<Buffer> {
  const samples = new Uint16Array(width * height * 3);
  for (let i = 0; i < samples.length; i++) samples[i] = (i * 37) % 65536;
  // sharp takes the sample depth from the typed array: a Uint16Array is read as 16-bit.
  return sharp(samples, { raw: { width, height, channels: 3 } })
    .toColourspace('rgb16')
    .png()
    .toBuffer();
}

/**
 * Stream kinds and duration of a media file, as ffprobe reports them; for its video stream the
 * coded size, the sample and display aspect ratios, and the display rotation (0 when none).
 */
export async function probeFile(file: string): Promise<{
  streams: string[];
  durationS: number;
  width?: number;
  height?: number;
  sar?: string;
  dar?: string;
  rotation?: number;
}> {
  const { stdout } = await exec('ffprobe', [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_streams',
    '-show_format',
    file,
  ]);
  const info = JSON.parse(stdout) as {
    streams: {
      codec_type: string;
      width?: number;
      height?: number;
      sample_aspect_ratio?: string;
      display_aspect_ratio?: string;
      side_data_list?: { rotation?: number }[];
    }[];
    format: { duration: string };
  };
  const video = info.streams.find((s) => s.codec_type === 'video');
  return {
    streams: info.streams.map((s) => s.codec_type).sort(),
    durationS: Number(info.format.duration),
    ...(video?.width
      ? {
          width: video.width,
          height: video.height,
          sar: video.sample_aspect_ratio,
          dar: video.display_aspect_ratio,
          rotation: video.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0,
        }
      : {}),
  };
}

/**
 * One video frame at `atS` seconds as RGB pixels at `width`x`height`, the way a player shows it:
 * display rotation and pixel aspect ratio applied, then scaled to the size asked for.
 */
export async function videoFrame(file: string, atS: number, width: number, height: number): Promise<Buffer> {
  const { stdout } = await exec(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-ss',
      String(atS),
      '-i',
      file,
      '-frames:v',
      '1',
      '-vf',
      `scale=${width}:${height},setsar=1`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** The mean absolute difference of two equally sized pixel buffers, 0 (same) to 255. */
export function meanDifference(a: Buffer, b: Buffer): number {
  if (a.length !== b.length) throw new Error(`sizes differ: ${a.length} and ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
  return sum / a.length;
}
