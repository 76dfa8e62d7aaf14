import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { permanentFailure } from '../errors/failures';
import { boundedResponse, isTooLarge } from '../net/bounded-response';
import { fetchMedia, type FetchedMedia } from '../net/fetch-media';
import { formatBytes, providerHttpFailure, providerOutputFailure } from './failures';
import {
  assertDecodes,
  assertProviderMayFetch,
  fetchInputImage,
  inspectImage,
  MAX_INPUT_PIXELS,
  undecodableImage,
} from './image-input';
import type { AiImageInput } from './schemas';
import { storeOutput } from './store';
import { stoppedByCaller, type ProviderOutcome, type ToolContext } from './types';

/** A prediction API's answer is a small JSON document (the image comes by URL). */
const MAX_PREDICTION_ANSWER_BYTES = 1024 * 1024;
/** The Images API answers with the image inside, base64: a 1536x1024 PNG is a few MB of it. */
const MAX_IMAGES_API_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * A provider's answer past what is read of it: the provider's failure, permanent (the same job
 * would answer the same), and nothing of the answer is held whole to find out.
 */
const answerTooLarge = (maxBytes: number) =>
  permanentFailure(
    'PROVIDER_ERROR',
    `The image provider's answer is larger than ${formatBytes(maxBytes)}, the most read of it.`,
  );
/** The OpenAI Images API's sizes nearest each aspect ratio. */
const OPENAI_SIZES = {
  '1:1': '1024x1024',
  '16:9': '1536x1024',
  '4:3': '1536x1024',
  '9:16': '1024x1536',
  '3:4': '1024x1536',
} as const;
const PREVIEW_SIZES = {
  '1:1': [512, 512],
  '16:9': [768, 432],
  '9:16': [432, 768],
  '4:3': [640, 480],
  '3:4': [480, 640],
} as const;

/**
 * The image an edit starts from, fetched and its header read: one that cannot be decoded or has
 * too many pixels is refused at once (415, 413), never retried.
 */
async function imageToEdit(url: string, ctx: ToolContext): Promise<FetchedMedia> {
  const media = await fetchInputImage(url, ctx);
  await inspectImage(media.body, 'The image');
  return media;
}

/** ai_image_2 on the configured image provider. */
export async function runAiImage(input: AiImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  switch (ctx.config.IMAGE_PROVIDER) {
    case 'prediction':
      return runPrediction(input, ctx);
    case 'openai':
      return runOpenAi(input, ctx);
    case 'local-preview':
      return runLocalPreview(input, ctx);
    case 'none':
      throw permanentFailure('PROVIDER_NOT_CONFIGURED', 'No image provider is configured.');
  }
}

interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled';
  output?: unknown;
  error?: unknown;
  urls?: { get?: string; cancel?: string };
}

/**
 * A Replicate-style prediction API: create the prediction, then poll its `urls.get` until it
 * settles. The prediction's id and poll URL go into every heartbeat, so a retried attempt polls
 * the job already paid for instead of starting another.
 */
async function runPrediction(input: AiImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const base = (ctx.config.PREDICTION_API_URL ?? '').replace(/\/$/, '');
  const headers = {
    'content-type': 'application/json',
    ...(ctx.config.PREDICTION_API_TOKEN
      ? { authorization: `Bearer ${ctx.config.PREDICTION_API_TOKEN}` }
      : {}),
  };
  const call = async (url: string, init: RequestInit): Promise<Prediction> => {
    let res: Response;
    let text: string;
    try {
      res = boundedResponse(
        await fetch(url, { ...init, headers, signal: ctx.signal }),
        MAX_PREDICTION_ANSWER_BYTES,
      );
      text = await res.text();
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (isTooLarge(err)) throw answerTooLarge(MAX_PREDICTION_ANSWER_BYTES);
      throw new Error(`The prediction provider could not be reached: ${(err as Error).message}`);
    }
    if (!res.ok) {
      ctx.logger.warn({ status: res.status, detail: text.slice(0, 300) }, 'prediction provider refused');
      throw providerHttpFailure('prediction', res.status, text);
    }
    return JSON.parse(text) as Prediction;
  };

  // The token goes only where PREDICTION_API_URL points: a poll or cancel URL the provider names
  // on another origin (a proxy's rewrite, a compromised provider) is not followed.
  const origin = new URL(base).origin;
  const own = (url: string | undefined): string | undefined => {
    if (url === undefined || !URL.canParse(url)) return undefined;
    return new URL(url).origin === origin ? url : undefined;
  };
  const predictionUrl = (id: string) => `${base}/predictions/${encodeURIComponent(id)}`;

  let prediction: Prediction;
  if (ctx.previous?.pollUrl) {
    prediction = await call(own(ctx.previous.pollUrl) ?? predictionUrl(ctx.previous.providerRunId), {
      method: 'GET',
    });
  } else {
    // Edit mode: the image goes in as `image_input`, the list Replicate's image-edit models take.
    // The provider fetches it: a `/files/` URL of ours goes only when it is one of the caller's.
    if (input.image_url) assertProviderMayFetch(input.image_url, ctx);
    const imageInput = input.image_url ? { image_input: [input.image_url] } : {};
    prediction = await call(`${base}/predictions`, {
      method: 'POST',
      body: JSON.stringify({
        version: ctx.config.PREDICTION_MODEL,
        input: {
          prompt: input.prompt,
          aspect_ratio: input.aspect_ratio,
          ...(input.seed === undefined ? {} : { seed: input.seed }),
          ...imageInput,
        },
      }),
    });
  }
  const pollUrl = own(prediction.urls?.get) ?? predictionUrl(prediction.id);
  ctx.heartbeat({ providerRunId: prediction.id, pollUrl });

  // Later polls may omit the cancel URL: keep the first one seen.
  const cancelUrl = own(prediction.urls?.cancel);
  const cancel = () => {
    if (cancelUrl && stoppedByCaller(ctx.signal))
      fetch(cancelUrl, { method: 'POST', headers }).catch(() => undefined);
  };
  ctx.signal.addEventListener('abort', cancel, { once: true });
  try {
    while (prediction.status === 'starting' || prediction.status === 'processing') {
      await sleep(ctx.config.PROVIDER_POLL_INTERVAL, undefined, { signal: ctx.signal });
      prediction = await call(pollUrl, { method: 'GET' });
      ctx.heartbeat({ providerRunId: prediction.id, pollUrl });
    }
  } finally {
    ctx.signal.removeEventListener('abort', cancel);
  }
  if (prediction.status !== 'succeeded') {
    const detail = typeof prediction.error === 'string' ? prediction.error.slice(0, 300) : undefined;
    ctx.logger.warn({ status: prediction.status, detail }, 'prediction did not succeed');
    throw permanentFailure('PROVIDER_ERROR', `The image provider's job ${prediction.status}.`, detail);
  }
  const outputs = (Array.isArray(prediction.output) ? prediction.output : [prediction.output]).filter(
    (o): o is string => typeof o === 'string',
  );
  if (outputs.length === 0) throw permanentFailure('PROVIDER_ERROR', 'The image provider returned no image.');

  const assets = [];
  for (const [i, url] of outputs.entries()) {
    let media;
    try {
      media = await fetchMedia(ctx.http, url, {
        accept: 'image',
        maxBytes: ctx.config.FETCH_MAX_BYTES,
        signal: ctx.signal,
      });
    } catch (err) {
      throw providerOutputFailure(err);
    }
    assets.push(await storeOutput(ctx, `image-${i + 1}.${media.ext}`, media.body, media.mimeType));
  }
  const first = assets[0] as (typeof assets)[number];
  return {
    providerRunId: prediction.id,
    output: {
      url: first.url,
      provider: 'prediction',
      model: ctx.config.PREDICTION_MODEL,
      providerOutput: outputs,
    },
    assets,
  };
}

/** The OpenAI Images API: generations, or edits when an image is given. */
async function runOpenAi(input: AiImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  // Temporal retries the activity; the client's own retries would only hide the failures.
  const client = new OpenAI({
    apiKey: ctx.config.OPENAI_API_KEY,
    baseURL: ctx.config.OPENAI_BASE_URL,
    maxRetries: 0,
    // The SDK reads each answer whole: it gets one cut at the limit instead.
    fetch: async (input, init) => boundedResponse(await fetch(input, init), MAX_IMAGES_API_ANSWER_BYTES),
  });
  const size = OPENAI_SIZES[input.aspect_ratio];
  const model = ctx.config.OPENAI_IMAGE_MODEL;
  let response: OpenAI.ImagesResponse;
  try {
    if (input.image_url) {
      const media = await imageToEdit(input.image_url, ctx);
      // OpenAI would refuse an image that breaks off with a 400 after we paid for the call.
      await assertDecodes(media.body, 'The image');
      const image = await toFile(media.body, `input.${media.ext}`, { type: media.mimeType });
      response = await client.images.edit(
        { model, image, prompt: input.prompt, size, n: 1 },
        { signal: ctx.signal },
      );
    } else {
      response = await client.images.generate(
        { model, prompt: input.prompt, size, n: 1 },
        { signal: ctx.signal },
      );
    }
  } catch (err) {
    if (isTooLarge(err)) throw answerTooLarge(MAX_IMAGES_API_ANSWER_BYTES);
    if (err instanceof OpenAI.APIError && err.status !== undefined) {
      ctx.logger.warn({ status: err.status, detail: err.message }, 'OpenAI image call refused');
      throw providerHttpFailure('OpenAI', err.status, err.message);
    }
    throw err;
  }
  const image = response.data?.[0];
  let body: Buffer;
  if (image?.b64_json) body = Buffer.from(image.b64_json, 'base64');
  else if (image?.url) {
    try {
      body = (
        await fetchMedia(ctx.http, image.url, {
          accept: 'image',
          maxBytes: ctx.config.FETCH_MAX_BYTES,
          signal: ctx.signal,
        })
      ).body;
    } catch (err) {
      throw providerOutputFailure(err);
    }
  } else throw permanentFailure('PROVIDER_ERROR', 'OpenAI returned no image.');
  const asset = await storeOutput(ctx, 'image-1.png', await decodedOutput(body), 'image/png');
  return {
    providerRunId: `openai:${response.created}:${ctx.toolCallId}`,
    output: {
      url: asset.url,
      provider: 'openai',
      model,
      size,
      ...(image.revised_prompt ? { revisedPrompt: image.revised_prompt } : {}),
    },
    assets: [asset],
  };
}

/**
 * A provider's image as the PNG we store, decoded under the same pixel limit as a user's: an
 * image past it, or one that does not decode, is the provider's failure, not a worker's memory.
 */
async function decodedOutput(body: Buffer): Promise<Buffer> {
  try {
    return await sharp(body, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).png().toBuffer();
  } catch (err) {
    throw permanentFailure(
      'PROVIDER_ERROR',
      'The generated image could not be used.',
      (err as Error).message,
    );
  }
}

/**
 * A real PNG, without any remote service: a colour field derived from prompt and seed, so the same
 * input always yields the same picture. In edit mode the given image is tinted the same way.
 */
async function runLocalPreview(input: AiImageInput, ctx: ToolContext): Promise<ProviderOutcome> {
  const digest = createHash('sha256')
    .update(`${input.seed ?? 0}\n${input.prompt}`)
    .digest();
  const [width, height] = PREVIEW_SIZES[input.aspect_ratio];
  const [r1, g1, b1, r2, g2, b2] = digest;
  let png: Buffer;
  if (input.image_url) {
    const media = await imageToEdit(input.image_url, ctx);
    try {
      png = await sharp(media.body, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
        .rotate()
        .resize(width, height, { fit: 'cover' })
        .tint({ r: r1 ?? 0, g: g1 ?? 0, b: b1 ?? 0 })
        .png()
        .toBuffer();
    } catch {
      throw undecodableImage('The image');
    }
  } else {
    // A diagonal gradient between two digest colours.
    const pixels = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const t = (x / width + y / height) / 2;
        const i = (y * width + x) * 3;
        pixels[i] = Math.round((r1 ?? 0) * (1 - t) + (r2 ?? 0) * t);
        pixels[i + 1] = Math.round((g1 ?? 0) * (1 - t) + (g2 ?? 0) * t);
        pixels[i + 2] = Math.round((b1 ?? 0) * (1 - t) + (b2 ?? 0) * t);
      }
    }
    png = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer();
  }
  const asset = await storeOutput(ctx, 'image-1.png', png, 'image/png');
  return {
    providerRunId: `local-preview:${digest.toString('hex', 0, 12)}`,
    output: {
      url: asset.url,
      provider: 'local-preview',
      width,
      height,
      mode: input.image_url ? 'edit' : 'generate',
    },
    assets: [asset],
  };
}
