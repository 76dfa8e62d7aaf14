import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { preparedCommand } from './prepared';

const exec = promisify(execFile);

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Serves fixed bytes at chosen paths on loopback: the "remote" images and videos of a test. */
export async function startMediaServer() {
  const files = new Map<string, { body: Buffer; type: string }>();
  const server = createServer((req, res) => {
    const file = files.get(req.url ?? '');
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
  });
  const base = await listen(server);
  return {
    add(name: string, body: Buffer, type = 'application/octet-stream'): string {
      files.set(`/${name}`, { body, type });
      return `${base}/${name}`;
    },
    close: () => close(server),
  };
}

export type PredictionBehaviour = 'succeed' | 'fail' | 'never' | 'reject' | 'flaky';

/**
 * A Replicate-style prediction API on loopback. The prompt picks the behaviour: a prompt starting
 * `fail` ends `failed`, `never` stays `processing`, `reject` answers 422 at creation, `flaky` answers
 * 503 to its first creation; anything else succeeds after `pollsBeforeDone` polls with an image
 * the server also serves.
 */
export async function startFakePredictionServer(options: { pollsBeforeDone?: number } = {}) {
  const pollsBeforeDone = options.pollsBeforeDone ?? 3;
  const predictions = new Map<string, { behaviour: PredictionBehaviour; polls: number; canceled: boolean }>();
  const created: { authorization?: string; body: unknown }[] = [];
  const image = await solidPng(64, 64, { r: 10, g: 200, b: 30 });
  const flakyPrompts = new Set<string>();
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
                : 'succeed';
        if (behaviour === 'reject') return json(422, { detail: 'prompt refused' });
        if (behaviour === 'flaky' && !flakyPrompts.has(prompt)) {
          flakyPrompts.add(prompt);
          return json(503, { detail: 'try again' });
        }
        const id = `pred-${++next}`;
        predictions.set(id, { behaviour, polls: 0, canceled: false });
        return json(201, {
          id,
          status: 'starting',
          urls: { get: `${base}/predictions/${id}`, cancel: `${base}/predictions/${id}/cancel` },
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
        const urls = { get: `${base}/predictions/${id}` };
        if (p.behaviour === 'never' || p.polls < pollsBeforeDone)
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
  return { url: base, predictions, created, image, close: () => close(server) };
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

/** A short test clip made by ffmpeg from its built-in sources. */
export async function testVideo(options: {
  width: number;
  height: number;
  fps: number;
  seconds: number;
  audio: boolean;
}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'test-video-'));
  try {
    const out = path.join(dir, 'clip.mp4');
    const { width, height, fps, seconds } = options;
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
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      ...(options.audio ? ['-c:a', 'aac'] : []),
      '-shortest',
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Stream kinds and duration of a media file, as ffprobe reports them. */
export async function probeFile(
  file: string,
): Promise<{ streams: string[]; durationS: number; width?: number; height?: number }> {
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
    streams: { codec_type: string; width?: number; height?: number }[];
    format: { duration: string };
  };
  const video = info.streams.find((s) => s.codec_type === 'video');
  return {
    streams: info.streams.map((s) => s.codec_type).sort(),
    durationS: Number(info.format.duration),
    ...(video?.width ? { width: video.width, height: video.height } : {}),
  };
}
