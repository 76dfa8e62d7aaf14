import type { Readable } from 'node:stream';
import {
  mediaBody,
  MediaFetchError,
  openMedia,
  type MediaOptions,
  type OpenedMedia,
} from '../net/fetch-media';
import { GuardedHttpError } from '../net/guarded-http';
import { ObjectNotFoundError } from '../storage/keys';
import { fileUrlOf, readableFileKey } from '../storage/signing';
import type { ToolContext } from './types';

type InputContext = Pick<ToolContext, 'config' | 'http' | 'storage' | 'userId'>;

/**
 * The key of the caller's own stored file that an input URL of this service's `/files/` names;
 * undefined for a URL of any other host. Any other `/files/` URL (forged, expired, signed under a
 * retired secret, another user's) is refused as a blocked address, so it gets the one answer of
 * every URL the service will not fetch (mediaFetchFailure).
 */
export function ownInputFile(url: string, ctx: InputContext): string | undefined {
  const file = fileUrlOf(ctx.config, url);
  if (!file) return undefined;
  const key = readableFileKey(ctx.config, file, ctx.userId);
  if (key === undefined)
    throw new GuardedHttpError('BLOCKED_ADDRESS', 'A file URL of this service the caller may not read.');
  return key;
}

const tooLarge = () => new GuardedHttpError('TOO_LARGE', 'The stored file is larger than allowed.');

async function* storedChunks(
  body: Readable,
  maxBytes: number,
  take?: (bytes: number) => boolean,
): AsyncGenerator<Buffer> {
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = (chunk as Buffer).length;
      size += bytes;
      if (size > maxBytes || (take && !take(bytes))) throw tooLarge();
      yield chunk as Buffer;
    }
  } finally {
    body.destroy();
  }
}

/**
 * Opens a media URL a user gave a tool. The service's own `/files/` URLs are never fetched over
 * the network: one of the caller's own files is read from storage, under the same byte limit,
 * and any other is refused (ownInputFile). A missing file answers as the route would have: 404.
 */
export async function openInputMedia(
  url: string,
  ctx: InputContext,
  options: MediaOptions,
): Promise<OpenedMedia> {
  const key = ownInputFile(url, ctx);
  if (key === undefined) return openMedia(ctx.http, url, options);
  const object = await ctx.storage.get(key).catch((err: unknown) => {
    if (err instanceof ObjectNotFoundError)
      throw new MediaFetchError('HTTP_STATUS', `Fetching ${url} answered HTTP 404.`, 404);
    throw err;
  });
  if (object.size > options.maxBytes) {
    object.body.destroy();
    throw tooLarge();
  }
  return mediaBody(
    {
      declaredBytes: object.size,
      chunks: (take) => storedChunks(object.body, options.maxBytes, take),
      discard: () => object.body.destroy(),
    },
    url,
    options.accept,
  );
}
