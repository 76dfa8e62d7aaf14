import type { ToolAsset } from '../schemas/events';
import { releaseStorage, reserveStorage } from '../storage/store';
import type { ToolContext } from './types';

/**
 * Stores a tool's output under a key fixed by the tool call, so a retried attempt overwrites
 * its own earlier copy instead of leaving a second one; counted against the user's storage quota
 * first (422 LIMIT_REACHED, a permanent failure of the call, and nothing stored, past it).
 */
export async function storeOutput(
  ctx: Pick<ToolContext, 'storage' | 'userId' | 'toolCallId' | 'db' | 'config'>,
  filename: string,
  body: Buffer,
  mimeType: string,
): Promise<ToolAsset> {
  const key = `tools/${ctx.userId}/${ctx.toolCallId}/${filename}`;
  await reserveStorage(ctx.db.pool, {
    userId: ctx.userId,
    files: [{ storageKey: key, sizeBytes: body.length }],
    maxBytes: ctx.config.MAX_STORED_BYTES_PER_USER,
  });
  try {
    await ctx.storage.put(key, body, { contentType: mimeType, size: body.length });
  } catch (err) {
    await releaseStorage(ctx.db.pool, [key]).catch(() => undefined);
    throw err;
  }
  return { url: ctx.storage.url(key), mimeType, filename };
}
