import sharp from 'sharp';
import { permanentFailure } from '../errors/failures';
import { fetchMedia, sniff } from '../net/fetch-media';
import { mediaFetchFailure } from './failures';
import { inspectImage, MAX_INPUT_PIXELS, undecodableImage } from './image-input';
import { resolveRectangle } from './rectangle';
import type { CropImageInput } from './schemas';
import { storeOutput } from './store';
import type { ProviderOutcome, ToolContext } from './types';

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
    throw mediaFetchFailure(err, 'The image', ctx.config.FETCH_MAX_BYTES);
  }
}

/** crop_image: local, with sharp. */
export async function runCropImage(input: CropImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const source = await loadImage(input, ctx);
  const image = await inspectImage(source, 'The image');
  const { meta } = image;
  // EXIF orientations 5–8 turn the image a quarter: the upright image swaps width and height.
  const quarterTurn = (meta.orientation ?? 1) >= 5;
  const width = quarterTurn ? image.height : image.width;
  const height = quarterTurn ? image.width : image.height;
  const rect = resolveRectangle(input, width, height);

  const format: KeptFormat = meta.format in KEPT_FORMATS ? (meta.format as KeptFormat) : 'png';
  let body: Buffer;
  try {
    // rotate() before extract(): the rectangle is in the upright image the user sees.
    body = await sharp(source, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .extract(rect)
      .toFormat(format)
      .toBuffer();
  } catch {
    throw undecodableImage('The image');
  }
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
