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
  body: Buffer,
  mimeType: string,
): Promise<ToolAsset> {
  const key = toolOutputKey(ctx.userId, ctx.toolCallId, filename);
  await ctx.storage.put(key, body, { contentType: mimeType, size: body.length });
  return { url: ctx.storage.url(key), mimeType, filename };
}
