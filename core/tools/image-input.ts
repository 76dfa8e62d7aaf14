import type { ApplicationFailure } from '@temporalio/common';
import sharp from 'sharp';
import { permanentFailure } from '../errors/failures';
import type { FetchedMedia } from '../net/fetch-media';
import { mediaFetchFailure } from './failures';
import { openInputMedia, ownInputFile } from './input-media';
import type { ToolContext } from './types';

/**
 * Decoding a larger image could exhaust memory: 100 megapixels (all frames of an animation
 * together) is far beyond any real photo.
 */
export const MAX_INPUT_PIXELS = 100_000_000;

export interface ImageInput {
  /** The header as sharp reads it, every frame included (`pages`, `pageHeight`). */
  meta: sharp.Metadata;
  /** One frame's size as stored (before any EXIF rotation). */
  width: number;
  height: number;
  frames: number;
}

/**
 * An image a user gave that sharp could not decode. Decoding is deterministic, so no retry could
 * mend it: a permanent 415 at the first attempt, whatever sharp's own words were.
 */
export function undecodableImage(what: string): ApplicationFailure {
  return permanentFailure(
    'UNSUPPORTED_MEDIA_TYPE',
    `${what} cannot be decoded: it is corrupt, incomplete, or of a kind this service does not read.`,
  );
}

/**
 * Reads an input image's header, and refuses at once what no retry can mend: a header sharp
 * cannot read (415), or more than MAX_INPUT_PIXELS (413, naming the size and the limit). The
 * header alone is read here; a body that breaks off later fails when it is decoded, which the
 * caller answers with `undecodableImage`.
 */
export async function inspectImage(body: Buffer, what: string): Promise<ImageInput> {
  let meta: sharp.Metadata;
  try {
    // No pixel limit on the header: the limit is checked below, so its refusal can name it.
    meta = await sharp(body, { animated: true, limitInputPixels: false }).metadata();
  } catch {
    throw undecodableImage(what);
  }
  const frames = meta.pages ?? 1;
  const width = meta.width;
  const height = meta.pageHeight ?? meta.height;
  if (!width || !height) throw undecodableImage(what);
  const pixels = width * height * frames;
  if (pixels > MAX_INPUT_PIXELS) {
    const size = `${width}x${height}${frames > 1 ? ` x ${frames} frames` : ''}`;
    throw permanentFailure(
      'PAYLOAD_TOO_LARGE',
      `${what} is ${size} (${Math.ceil(pixels / 1_000_000)} megapixels); at most ${MAX_INPUT_PIXELS / 1_000_000} megapixels are accepted.`,
    );
  }
  return { meta, width, height, frames };
}

/**
 * Decodes every pixel once, so an image whose data breaks off after a valid header is refused
 * here, by us, rather than by a provider after it was paid to try.
 */
export async function assertDecodes(body: Buffer, what: string): Promise<void> {
  try {
    await sharp(body, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).stats();
  } catch {
    throw undecodableImage(what);
  }
}

type InputImageContext = Pick<ToolContext, 'http' | 'config' | 'signal' | 'storage' | 'userId'>;

/** An input image's failure to be fetched, as the call's failure (413s name IMAGE_FETCH_MAX_BYTES). */
const inputImageFailure = (err: unknown, ctx: InputImageContext) =>
  mediaFetchFailure(err, 'The image', {
    maxBytes: ctx.config.IMAGE_FETCH_MAX_BYTES,
    setting: 'IMAGE_FETCH_MAX_BYTES',
  });

/**
 * A user's input image by URL (one of the caller's own files when it is a `/files/` URL of ours:
 * openInputMedia). It is decoded in memory, so its body is streamed in and cut past
 * IMAGE_FETCH_MAX_BYTES (413 naming the setting), never read whole first.
 */
export async function fetchInputImage(url: string, ctx: InputImageContext): Promise<FetchedMedia> {
  const options = {
    accept: 'image' as const,
    maxBytes: ctx.config.IMAGE_FETCH_MAX_BYTES,
    signal: ctx.signal,
  };
  try {
    return await (await openInputMedia(url, ctx, options)).read();
  } catch (err) {
    throw inputImageFailure(err, ctx);
  }
}

/**
 * Refuses, as fetchInputImage would, an input image a provider fetches itself by its URL: one of
 * this service's `/files/` URLs that is not a file of the caller's.
 */
export function assertProviderMayFetch(url: string, ctx: InputImageContext): void {
  try {
    ownInputFile(url, ctx);
  } catch (err) {
    throw inputImageFailure(err, ctx);
  }
}
