import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { permanentFailure } from '../errors/failures';
import { fetchMedia } from '../net/fetch-media';
import { mediaFetchFailure } from './failures';
import type { MergeVideosInput } from './schemas';
import { storeOutput } from './store';
import type { ProviderOutcome, ToolContext } from './types';

const DEFAULT_SIZE = { width: 1280, height: 720 };
const FPS = 30;
const SAMPLE_RATE = 48_000;
const STDERR_TAIL = 2_000;

export interface ProbedVideo {
  width: number;
  height: number;
  hasAudio: boolean;
  durationS: number;
}

/** Runs a program to the end; its stderr tail explains a failure. */
function run(program: string, args: string[], signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { signal, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_TAIL)));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(program)} exited with ${code}: ${stderr.trim()}`));
    });
  });
}

export async function probe(
  ffprobe: string,
  file: string,
  signal: AbortSignal,
): Promise<ProbedVideo | undefined> {
  let json: string;
  try {
    json = await run(
      ffprobe,
      ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', file],
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
  const info = JSON.parse(json) as {
    streams?: { codec_type?: string; width?: number; height?: number; duration?: string }[];
    format?: { duration?: string };
  };
  const video = info.streams?.find((s) => s.codec_type === 'video');
  if (!video?.width || !video.height) return undefined;
  const durationS = Number(video.duration ?? info.format?.duration);
  if (!Number.isFinite(durationS) || durationS <= 0) return undefined;
  return {
    width: video.width,
    height: video.height,
    hasAudio: !!info.streams?.some((s) => s.codec_type === 'audio'),
    durationS,
  };
}

/**
 * The ffmpeg filter graph: every input scaled and padded to one size, 30 fps, 48 kHz stereo (a
 * silent track for inputs without audio, the audio cut or padded to the video's length so the two
 * stay in step), then joined by concat, or by xfade + acrossfade for fade and dissolve.
 */
export function buildFilterGraph(
  videos: ProbedVideo[],
  transition: MergeVideosInput['transition'],
  transitionS: number,
): string {
  const first = videos[0];
  const even = (n: number) => n - (n % 2);
  const w = first ? even(first.width) : DEFAULT_SIZE.width;
  const h = first ? even(first.height) : DEFAULT_SIZE.height;
  const parts: string[] = [];
  videos.forEach((v, i) => {
    parts.push(
      `[${i}:v]scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1,` +
        `fps=${FPS},format=yuv420p,trim=duration=${v.durationS},setpts=PTS-STARTPTS,settb=AVTB[v${i}]`,
    );
    const audio = v.hasAudio
      ? `[${i}:a]aformat=sample_rates=${SAMPLE_RATE}:channel_layouts=stereo,`
      : `anullsrc=r=${SAMPLE_RATE}:cl=stereo,aformat=sample_rates=${SAMPLE_RATE}:channel_layouts=stereo,`;
    parts.push(`${audio}apad,atrim=duration=${v.durationS},asetpts=PTS-STARTPTS[a${i}]`);
  });
  if (transition === 'none') {
    parts.push(
      `${videos.map((_, i) => `[v${i}][a${i}]`).join('')}concat=n=${videos.length}:v=1:a=1[vout][aout]`,
    );
    return parts.join(';');
  }
  let offset = 0;
  let vPrev = 'v0';
  let aPrev = 'a0';
  for (let i = 1; i < videos.length; i++) {
    // Each xfade starts transitionS before the end of everything joined so far.
    offset += (videos[i - 1]?.durationS ?? 0) - transitionS;
    const vNext = i === videos.length - 1 ? 'vout' : `vx${i}`;
    const aNext = i === videos.length - 1 ? 'aout' : `ax${i}`;
    parts.push(
      `[${vPrev}][v${i}]xfade=transition=${transition}:duration=${transitionS}:offset=${offset.toFixed(3)}[${vNext}]`,
    );
    parts.push(`[${aPrev}][a${i}]acrossfade=d=${transitionS}[${aNext}]`);
    vPrev = vNext;
    aPrev = aNext;
  }
  return parts.join(';');
}

/** merge_videos: local, with ffmpeg. Temporary files go, whatever happens. */
export async function runMergeVideos(input: MergeVideosInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const dir = await mkdtemp(path.join(tmpdir(), 'merge-videos-'));
  try {
    const files: string[] = [];
    let budget = ctx.config.FETCH_MAX_BYTES;
    for (const [i, url] of input.video_urls.entries()) {
      let media;
      try {
        media = await fetchMedia(ctx.http, url, { accept: 'video', maxBytes: budget, signal: ctx.signal });
      } catch (err) {
        throw mediaFetchFailure(err, `Video ${i + 1}`, budget);
      }
      budget -= media.body.length;
      const file = path.join(dir, `input-${i}.${media.ext}`);
      await writeFile(file, media.body);
      files.push(file);
      ctx.heartbeat();
    }

    const videos: ProbedVideo[] = [];
    for (const [i, file] of files.entries()) {
      const probed = await probe(ctx.config.FFPROBE_PATH, file, ctx.signal);
      if (!probed)
        throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', `Video ${i + 1} has no readable video stream.`);
      videos.push(probed);
    }
    const total = videos.reduce((sum, v) => sum + v.durationS, 0);
    if (total > ctx.config.MERGE_MAX_INPUT_SECONDS) {
      throw permanentFailure(
        'INVALID_REQUEST',
        `The videos last ${Math.round(total)} s together; at most ${ctx.config.MERGE_MAX_INPUT_SECONDS} s may be merged.`,
      );
    }
    const transitionS = input.transition === 'none' ? 0 : input.transition_duration;
    if (transitionS > 0 && videos.some((v) => v.durationS <= transitionS)) {
      throw permanentFailure('INVALID_REQUEST', 'Every video must last longer than the transition.');
    }

    const out = path.join(dir, 'merged.mp4');
    const args = [
      '-hide_banner',
      '-nostdin',
      '-y',
      ...files.flatMap((f) => ['-i', f]),
      '-filter_complex',
      buildFilterGraph(videos, input.transition, transitionS),
      '-map',
      '[vout]',
      '-map',
      '[aout]',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-b:a',
      '128k',
      '-movflags',
      '+faststart',
      out,
    ];
    try {
      await run(ctx.config.FFMPEG_PATH, args, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.logger.warn({ err }, 'ffmpeg failed');
      throw permanentFailure('PROVIDER_ERROR', 'The videos could not be merged.');
    }
    const merged = await probe(ctx.config.FFPROBE_PATH, out, ctx.signal);
    const asset = await storeOutput(ctx, 'merged.mp4', await readFile(out), 'video/mp4');
    return {
      providerRunId: `ffmpeg:${ctx.toolCallId}`,
      output: {
        url: asset.url,
        provider: 'ffmpeg',
        durationS: merged?.durationS,
        width: merged?.width,
        height: merged?.height,
        transition: input.transition,
        inputs: videos.length,
      },
      assets: [asset],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
