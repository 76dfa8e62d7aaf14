import type { Experimental_DownloadFunction as DownloadFunction } from 'ai';
import type { Config } from '../config/config';
import { fetchMedia } from '../net/fetch-media';
import type { GuardedHttp } from '../net/guarded-http';
import { mediaFetchFailure } from '../tools/failures';

/**
 * How the AI SDK fetches an image for a provider that cannot take its URL (Google's API takes only
 * its own file URLs; an OpenAI-compatible server, none): through the guarded client every user URL
 * goes through, so a chat's image cannot reach an address the tools could not, its bytes sniffed
 * and capped as a tool's input image. A URL the provider takes itself is passed on untouched.
 */
export function guardedDownload(
  http: GuardedHttp,
  config: Pick<Config, 'IMAGE_FETCH_MAX_BYTES'>,
): DownloadFunction {
  const maxBytes = config.IMAGE_FETCH_MAX_BYTES;
  return (requests) =>
    Promise.all(
      requests.map(async ({ url, isUrlSupportedByModel, abortSignal }) => {
        if (isUrlSupportedByModel) return null;
        try {
          const media = await fetchMedia(http, url.toString(), {
            accept: 'image',
            maxBytes,
            ...(abortSignal ? { signal: abortSignal } : {}),
          });
          return { data: new Uint8Array(media.body), mediaType: media.mimeType };
        } catch (err) {
          throw mediaFetchFailure(err, 'An image of the chat', {
            maxBytes,
            setting: 'IMAGE_FETCH_MAX_BYTES',
          });
        }
      }),
    );
}
