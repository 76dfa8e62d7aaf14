import sharp from 'sharp';
import { permanentFailure } from '../errors/failures';
import { sniff } from '../net/fetch-media';
import {
  fetchInputImage,
  inspectImage,
  MAX_INPUT_PIXELS,
  undecodableImage,
  type ImageInput,
} from './image-input';
import { resolveRectangle } from './rectangle';
import type { CropImageInput } from './schemas';
import { storeOutput } from './store';
import type { ProviderOutcome, ToolContext } from './types';

/** Formats kept as they came; anything else still becomes PNG. */
const KEPT_FORMATS = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
/** Formats whose every frame is cropped and kept, with its timing, when they are animated. */
const ANIMATED_FORMATS = { webp: 'image/webp', gif: 'image/gif' } as const;
type OutputFormat = keyof typeof KEPT_FORMATS | keyof typeof ANIMATED_FORMATS;
const OUTPUT_TYPES = { ...KEPT_FORMATS, ...ANIMATED_FORMATS };

async function loadImage(
  input: CropImageInput,
  ctx: ToolContext,
): Promise<{ body: Buffer; mimeType: string }> {
  if (input.attachmentId) {
    const { rows } = await ctx.db.pool.query<{ storageKey: string }>(
      `SELECT "storageKey" FROM "Attachment" WHERE id = $1 AND "userId" = $2`,
      [input.attachmentId, ctx.userId],
    );
    const row = rows[0];
    if (!row) throw permanentFailure('ATTACHMENT_NOT_FOUND', 'The attachment does not exist.');
    const object = await ctx.storage.get(row.storageKey);
    const chunks: Buffer[] = [];
    for await (const chunk of object.body) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const type = await sniff(body);
    if (!type?.mime.startsWith('image/')) {
      throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', 'The attachment is not an image.');
    }
    return { body, mimeType: type.mime };
  }
  return fetchInputImage(input.image_url ?? '', ctx);
}

/**
 * The image as it will be cropped, or a permanent 415 for what a crop would silently lose: the
 * frames of an animated PNG (sharp reads only its first) or of a multi-page image other than an
 * animated WebP or GIF, and the EXIF rotation of an animation (sharp cannot turn its frames).
 */
async function croppableImage(source: { body: Buffer; mimeType: string }): Promise<ImageInput> {
  if (source.mimeType === 'image/apng') {
    throw permanentFailure(
      'UNSUPPORTED_MEDIA_TYPE',
      'The image is an animated PNG, whose frames cannot be kept: send an animated WebP or GIF, or a still PNG.',
    );
  }
  const image = await inspectImage(source.body, 'The image');
  if (image.frames > 1 && !(image.meta.format in ANIMATED_FORMATS)) {
    throw permanentFailure(
      'UNSUPPORTED_MEDIA_TYPE',
      `The image has ${image.frames} pages; only animated WebP and GIF are cropped frame by frame.`,
    );
  }
  if (image.frames > 1 && (image.meta.orientation ?? 1) !== 1) {
    throw permanentFailure(
      'UNSUPPORTED_MEDIA_TYPE',
      'The animated image carries an EXIF rotation, which cannot be applied to its frames.',
    );
  }
  return image;
}

/**
 * crop_image: local, with sharp. The output keeps what the input carries: its format (PNG, JPEG,
 * WebP; others become PNG), every frame of an animated WebP or GIF (each cropped alike, with its
 * timing and loop count), and 16-bit samples (written as a 16-bit PNG).
 */
export async function runCropImage(input: CropImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const source = await loadImage(input, ctx);
  const image = await croppableImage(source);
  const { meta, frames } = image;
  const animated = frames > 1;
  // EXIF orientations 5–8 turn the image a quarter: the upright image swaps width and height.
  const quarterTurn = (meta.orientation ?? 1) >= 5;
  const width = quarterTurn ? image.height : image.width;
  const height = quarterTurn ? image.width : image.height;
  const rect = resolveRectangle(input, width, height);

  const format: OutputFormat = animated
    ? (meta.format as keyof typeof ANIMATED_FORMATS)
    : meta.format in KEPT_FORMATS
      ? (meta.format as keyof typeof KEPT_FORMATS)
      : 'png';
  let pipeline = sharp(source.body, { animated, limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
  // rotate() before extract(): the rectangle is in the upright image the user sees.
  if (!animated) pipeline = pipeline.rotate();
  pipeline = pipeline.extract(rect);
  // sharp writes 8 bits unless told otherwise; a 16-bit input stays 16-bit in a PNG.
  if (format === 'png' && meta.depth === 'ushort') {
    pipeline = pipeline.toColourspace((meta.channels ?? 3) <= 2 ? 'grey16' : 'rgb16');
  }
  let body: Buffer;
  try {
    body = await pipeline.toFormat(format).toBuffer();
  } catch {
    throw undecodableImage('The image');
  }
  const ext = format === 'jpeg' ? 'jpg' : format;
  const asset = await storeOutput(ctx, `cropped.${ext}`, body, OUTPUT_TYPES[format]);
  return {
    providerRunId: `sharp:${ctx.toolCallId}`,
    output: {
      url: asset.url,
      provider: 'sharp',
      width: rect.width,
      height: rect.height,
      format,
      frames,
      rectangle: rect,
    },
    assets: [asset],
  };
}
