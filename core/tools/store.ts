import { createReadStream } from 'node:fs';
import type { ToolAsset } from '../schemas/events';
import { releaseStorage, reserveStorage } from '../storage/store';
import { toolOutputKey } from '../storage/keys';
import type { ToolContext } from './types';

/**
 * Stores a tool's output under a key fixed by the tool call, so a retried attempt overwrites
 * its own earlier copy instead of leaving a second one; counted against the user's storage quota
 * first (422 LIMIT_REACHED, a permanent failure of the call, and nothing stored, past it).
 */
export async function storeOutput(
  ctx: Pick<ToolContext, 'storage' | 'userId' | 'toolCallId' | 'db' | 'config'>,
  filename: string,
  body: Buffer | { file: string; size: number },
  mimeType: string,
): Promise<ToolAsset> {
  const key = toolOutputKey(ctx.userId, ctx.toolCallId, filename);
  const size = Buffer.isBuffer(body) ? body.length : body.size;
  await reserveStorage(ctx.db.pool, {
    userId: ctx.userId,
    files: [{ storageKey: key, sizeBytes: size }],
    maxBytes: ctx.config.MAX_STORED_BYTES_PER_USER,
  });
  try {
    if (Buffer.isBuffer(body)) {
      await ctx.storage.put(key, body, { contentType: mimeType, size });
    } else {
      // A file (a merged video) is streamed into storage, never read into memory whole.
      const stream = createReadStream(body.file);
      try {
        await ctx.storage.put(key, stream, { contentType: mimeType, size });
      } finally {
        stream.destroy();
      }
    }
  } catch (err) {
    await releaseStorage(ctx.db.pool, [key]).catch(() => undefined);
    throw err;
  }
  return { url: ctx.storage.url(key), mimeType, filename };
}
