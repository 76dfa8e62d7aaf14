import { createReadStream } from 'node:fs';
import type { ToolAsset } from '../schemas/events';
import { toolOutputKey } from '../storage/keys';
import type { ToolContext } from './types';

/**
 * Stores a tool's output under a key fixed by the tool call, so a retried attempt overwrites
 * its own earlier copy instead of leaving a second one.
 */
export async function storeOutput(
  ctx: Pick<ToolContext, 'storage' | 'userId' | 'toolCallId'>,
  filename: string,
  body: Buffer | { file: string; size: number },
  mimeType: string,
): Promise<ToolAsset> {
  const key = toolOutputKey(ctx.userId, ctx.toolCallId, filename);
  if (Buffer.isBuffer(body)) {
    await ctx.storage.put(key, body, { contentType: mimeType, size: body.length });
  } else {
    // A file (a merged video) is streamed into storage, never read into memory whole.
    const stream = createReadStream(body.file);
    try {
      await ctx.storage.put(key, stream, { contentType: mimeType, size: body.size });
    } finally {
      stream.destroy();
    }
  }
  return { url: ctx.storage.url(key), mimeType, filename };
}
