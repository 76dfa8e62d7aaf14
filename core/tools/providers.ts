import { runAiImage } from './ai-image';
import { runCropImage } from './crop-image';
import { runMergeVideos } from './merge-videos';
import { parseToolInput, type ToolName } from './registry';
import type { ProviderOutcome, ToolContext } from './types';

/** Validates a tool's input and runs it on its provider. */
export function runProvider(name: ToolName, rawInput: unknown, ctx: ToolContext): Promise<ProviderOutcome> {
  switch (name) {
    case 'crop_image':
      return runCropImage(parseToolInput('crop_image', rawInput), ctx);
    case 'ai_image_2':
      return runAiImage(parseToolInput('ai_image_2', rawInput), ctx);
    case 'merge_videos':
      return runMergeVideos(parseToolInput('merge_videos', rawInput), ctx);
  }
}
