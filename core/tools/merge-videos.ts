import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { permanentFailure } from '../errors/failures';
import type { Config } from '../config/config';
import { runProgram, type ProgramLimits } from '../process/run-program';
import { formatBytes, mediaFetchFailure } from './failures';
import { openInputMedia } from './input-media';
import type { MergeVideosInput } from './schemas';
import { storeOutput } from './store';
import type { ProviderOutcome, ToolContext } from './types';

const DEFAULT_SIZE = { width: 1280, height: 720 };
/** The output's longest side at most: a first clip larger than this is scaled down to it. */
const MAX_OUTPUT_SIDE = 4096;
const FPS = 30;
const SAMPLE_RATE = 48_000;

/**
 * Put before every input: files only (no http, no tcp, nothing a crafted playlist could name),
 * and only container demuxers a video upload comes in. hls, concat and image sequences are left
 * out: they open further files or URLs named inside the input.
 */
const INPUT_GUARD = [
  '-protocol_whitelist',
  'file,pipe',
  '-format_whitelist',
  'mov,mp4,matroska,webm,avi,mpegts,flv,ogg',
];

const PROBE_TIMEOUT_MS = 30_000;

function programLimits(config: Config, timeoutMs = config.FFMPEG_TIMEOUT): ProgramLimits {
  return { timeoutMs, maxMemoryBytes: config.FFMPEG_MAX_MEMORY_BYTES };
}

export interface ProbedVideo {
  /** The size a viewer sees: pixel aspect ratio and display rotation applied. */
  width: number;
  height: number;
  hasAudio: boolean;
  durationS: number;
}

interface ProbeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  duration?: string;
  sample_aspect_ratio?: string;
  side_data_list?: { rotation?: number }[];
  tags?: { rotate?: string };
}

/** `2:1` as 2; absent, unknown (`0:1`, `N/A`) or nonsense as square pixels. */
function ratio(value: string | undefined): number {
  const [n, d] = (value ?? '').split(':').map(Number);
  return n && d && Number.isFinite(n / d) ? n / d : 1;
}

/**
 * The displayed size of a video stream: its stored width stretched by the sample aspect ratio
 * (the height kept), then turned a quarter when the display rotation says so. ffmpeg applies
 * that rotation when it decodes (autorotate), so the frames the filter graph gets have this shape.
 */
export function displaySize(stream: ProbeStream): { width: number; height: number } | undefined {
  if (!stream.width || !stream.height) return undefined;
  const width = Math.round(stream.width * ratio(stream.sample_aspect_ratio));
  const rotation =
    stream.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ??
    Number(stream.tags?.rotate ?? 0);
  const degrees = ((Math.round(rotation) % 360) + 360) % 360;
  const quarterTurn = degrees === 90 || degrees === 270;
  return quarterTurn ? { width: stream.height, height: width } : { width, height: stream.height };
}

export async function probe(
  config: Config,
  file: string,
  signal: AbortSignal,
): Promise<ProbedVideo | undefined> {
  let json: string;
  try {
    json = await runProgram(
      config.FFPROBE_PATH,
      ['-v', 'error', ...INPUT_GUARD, '-print_format', 'json', '-show_streams', '-show_format', file],
      signal,
      programLimits(config, PROBE_TIMEOUT_MS),
    );
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
  const info = JSON.parse(json) as { streams?: ProbeStream[]; format?: { duration?: string } };
  const video = info.streams?.find((s) => s.codec_type === 'video');
  const size = video && displaySize(video);
  if (!video || !size) return undefined;
  const durationS = Number(video.duration ?? info.format?.duration);
  if (!Number.isFinite(durationS) || durationS <= 0) return undefined;
  return {
    ...size,
    hasAudio: !!info.streams?.some((s) => s.codec_type === 'audio'),
    durationS,
  };
}

const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));

/**
 * The output frame: the first video's displayed size (even, its longest side at most
 * MAX_OUTPUT_SIDE). Every video is fitted inside it whole and undistorted, centred on black bars.
 */
export function outputSize(videos: ProbedVideo[]): { width: number; height: number } {
  const first = videos[0] ?? DEFAULT_SIZE;
  const scale = Math.min(1, MAX_OUTPUT_SIDE / Math.max(first.width, first.height));
  return { width: even(first.width * scale), height: even(first.height * scale) };
}

/**
 * The ffmpeg filter graph: every input scaled to fit the output frame (its displayed shape kept,
 * square pixels out) and padded to it, 30 fps, 48 kHz stereo (a silent track for inputs without
 * audio, the audio cut or padded to the video's length so the two stay in step), then joined by
 * concat, or by xfade + acrossfade for fade and dissolve.
 */
export function buildFilterGraph(
  videos: ProbedVideo[],
  transition: MergeVideosInput['transition'],
  transitionS: number,
): string {
  const { width: w, height: h } = outputSize(videos);
  const parts: string[] = [];
  videos.forEach((v, i) => {
    const fit = Math.min(w / v.width, h / v.height);
    const fw = Math.min(w, even(v.width * fit));
    const fh = Math.min(h, even(v.height * fit));
    parts.push(
      `[${i}:v]scale=${fw}:${fh},pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1,` +
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

/**
 * Downloads every video into `dir`, all at once, each URL fetched once. Every answer's headers
 * come in before any body is read: a declared length over FETCH_MAX_BYTES for one video, or over
 * MERGE_MAX_TOTAL_BYTES for all of them together, is refused before a byte of video is
 * downloaded. Bodies of undeclared length count against the same total as they arrive.
 */
async function downloadVideos(urls: string[], dir: string, ctx: ToolContext): Promise<string[]> {
  const perVideo = ctx.config.FETCH_MAX_BYTES;
  const total = ctx.config.MERGE_MAX_TOTAL_BYTES;
  const overTotal = (size: string) =>
    permanentFailure(
      'PAYLOAD_TOO_LARGE',
      `The videos are ${size} together; merge_videos takes at most ${formatBytes(total)} in all (MERGE_MAX_TOTAL_BYTES).`,
    );
  const opened = await Promise.allSettled(
    urls.map((url) => openInputMedia(url, ctx, { accept: 'video', maxBytes: perVideo, signal: ctx.signal })),
  );
  const videos = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const discardAll = () => videos.forEach((v) => v.discard());
  const failed = opened.findIndex((o) => o.status === 'rejected');
  if (failed >= 0) {
    discardAll();
    throw mediaFetchFailure((opened[failed] as PromiseRejectedResult).reason, `Video ${failed + 1}`, {
      maxBytes: perVideo,
      setting: 'FETCH_MAX_BYTES',
    });
  }
  const declared = videos.reduce((sum, v) => sum + (v.declaredBytes ?? 0), 0);
  if (declared > total) {
    discardAll();
    throw overTotal(formatBytes(declared));
  }
  let received = 0;
  const take = (bytes: number) => (received += bytes) <= total;
  const files = videos.map((_, i) => path.join(dir, `input-${i}`));
  await Promise.all(
    videos.map(async (video, i) => {
      try {
        await video.save(files[i] as string, take);
      } catch (err) {
        discardAll();
        throw received > total
          ? overTotal(`more than ${formatBytes(total)}`)
          : mediaFetchFailure(err, `Video ${i + 1}`, { maxBytes: perVideo, setting: 'FETCH_MAX_BYTES' });
      }
      ctx.heartbeat();
    }),
  );
  return files;
}

/** merge_videos: local, with ffmpeg. Temporary files go, whatever happens. */
export async function runMergeVideos(input: MergeVideosInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const dir = await mkdtemp(path.join(tmpdir(), 'merge-videos-'));
  try {
    const files = await downloadVideos(input.video_urls, dir, ctx);

    const videos: ProbedVideo[] = [];
    for (const [i, file] of files.entries()) {
      const probed = await probe(ctx.config, file, ctx.signal);
      if (!probed)
        throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', `Video ${i + 1} has no readable video stream.`);
      videos.push(probed);
    }
    const maxSide = ctx.config.MERGE_MAX_INPUT_SIDE;
    for (const [i, v] of videos.entries()) {
      if (Math.max(v.width, v.height) > maxSide) {
        throw permanentFailure(
          'PAYLOAD_TOO_LARGE',
          `Video ${i + 1} is ${v.width}x${v.height}; at most ${maxSide} pixels a side (MERGE_MAX_INPUT_SIDE) may be merged.`,
        );
      }
    }
    const total = videos.reduce((sum, v) => sum + v.durationS, 0);
    if (total > ctx.config.MERGE_MAX_INPUT_SECONDS) {
      throw permanentFailure(
        'PAYLOAD_TOO_LARGE',
        `The videos last ${Math.round(total)} s together; at most ${ctx.config.MERGE_MAX_INPUT_SECONDS} s (MERGE_MAX_INPUT_SECONDS) may be merged.`,
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
      ...files.flatMap((f) => [...INPUT_GUARD, '-i', f]),
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
      // ffmpeg stops writing at the cap (and ends as if done): the size checked below tells.
      '-fs',
      String(ctx.config.MERGE_MAX_OUTPUT_BYTES),
      out,
    ];
    try {
      await runProgram(ctx.config.FFMPEG_PATH, args, ctx.signal, programLimits(ctx.config));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.logger.warn({ err }, 'ffmpeg failed');
      throw permanentFailure('PROVIDER_ERROR', 'The videos could not be merged.');
    }
    const { size } = await stat(out);
    if (size >= ctx.config.MERGE_MAX_OUTPUT_BYTES) {
      throw permanentFailure(
        'PAYLOAD_TOO_LARGE',
        `The merged video would be larger than ${formatBytes(ctx.config.MERGE_MAX_OUTPUT_BYTES)}, the most merge_videos writes (MERGE_MAX_OUTPUT_BYTES).`,
      );
    }
    const merged = await probe(ctx.config, out, ctx.signal);
    const asset = await storeOutput(ctx, 'merged.mp4', { file: out, size }, 'video/mp4');
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
