import sharp from 'sharp';
import { permanentFailure } from '../errors/failures';
import { fetchMedia, sniff } from '../net/fetch-media';
import { mediaFetchFailure } from './failures';
import { resolveRectangle } from './rectangle';
import type { CropImageInput } from './schemas';
import { storeOutput } from './store';
import type { ProviderOutcome, ToolContext } from './types';

/** Decoding a larger image could exhaust memory: 100 megapixels is far beyond any real photo. */
const MAX_INPUT_PIXELS = 100_000_000;
const KEPT_FORMATS = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;
type KeptFormat = keyof typeof KEPT_FORMATS;

async function loadImage(input: CropImageInput, ctx: ToolContext): Promise<Buffer> {
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
    return body;
  }
  try {
    const media = await fetchMedia(ctx.http, input.image_url ?? '', {
      accept: 'image',
      maxBytes: ctx.config.FETCH_MAX_BYTES,
      signal: ctx.signal,
    });
    return media.body;
  } catch (err) {
    throw mediaFetchFailure(err, 'The image');
  }
}

/** crop_image: local, with sharp. */
export async function runCropImage(input: CropImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const source = await loadImage(input, ctx);
  const image = sharp(source, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
  let meta: sharp.Metadata;
  try {
    meta = await image.metadata();
  } catch {
    throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', 'The image cannot be decoded.');
  }
  if (!meta.width || !meta.height) throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', 'The image has no size.');
  if (meta.width * meta.height > MAX_INPUT_PIXELS) {
    throw permanentFailure('PAYLOAD_TOO_LARGE', `The image is larger than ${MAX_INPUT_PIXELS} pixels.`);
  }
  // EXIF orientations 5–8 turn the image a quarter: the upright image swaps width and height.
  const quarterTurn = (meta.orientation ?? 1) >= 5;
  const width = quarterTurn ? meta.height : meta.width;
  const height = quarterTurn ? meta.width : meta.height;
  const rect = resolveRectangle(input, width, height);

  const format: KeptFormat = meta.format in KEPT_FORMATS ? (meta.format as KeptFormat) : 'png';
  // rotate() before extract(): the rectangle is in the upright image the user sees.
  const body = await image.rotate().extract(rect).toFormat(format).toBuffer();
  const ext = format === 'jpeg' ? 'jpg' : format;
  const asset = await storeOutput(ctx, `cropped.${ext}`, body, KEPT_FORMATS[format]);
  return {
    providerRunId: `sharp:${ctx.toolCallId}`,
    output: {
      url: asset.url,
      provider: 'sharp',
      width: rect.width,
      height: rect.height,
      format,
      rectangle: rect,
    },
    assets: [asset],
  };
}
