import { randomUUID } from 'node:crypto';
import { addLogContext } from '../core/logging/context';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppError, type ErrorCode } from '../core/errors/app-error';
import { isFailureType } from '../core/errors/failures';
import type { ToolResult } from '../core/schemas/events';
import { parseToolInput, TOOLS, type ToolName } from '../core/tools/registry';
import { startToolCall, starterOf } from '../workflows/client';
import type { Caller, OperationDeps } from './deps';

/** The errors each tool can answer besides the common ones: the document lists them. */
export const TOOL_ERRORS: Record<ToolName, ErrorCode[]> = {
  crop_image: [
    'INVALID_RECTANGLE',
    'ATTACHMENT_NOT_FOUND',
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
  ai_image_2: [
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'PROVIDER_NOT_CONFIGURED',
    'TIMEOUT',
  ],
  merge_videos: [
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
};

/** The three media tools, called directly and blocking. */
export function createToolsOperations(deps: OperationDeps) {
  return {
    /**
     * Runs one tool call as its own workflow and waits for it within TOOL_ROUTE_TIMEOUT. Past the
     * window the workflow is cancelled (its provider job with it) and the answer is 504 TIMEOUT;
     * a permanent failure answers the error its type names; spent retries answer 502.
     */
    async callTool(caller: Caller, name: ToolName, rawInput: unknown): Promise<ToolResult> {
      const input = parseToolInput(name, rawInput);
      if (TOOLS[name].provider(deps.config) === 'none') {
        throw new AppError('PROVIDER_NOT_CONFIGURED', `No provider is configured for ${name}.`);
      }
      const toolCallId = randomUUID();
      addLogContext({ toolCallId });
      const handle = await startToolCall(starterOf(deps), {
        toolCallId,
        toolName: name,
        input,
        userId: caller.userId,
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), deps.config.TOOL_ROUTE_TIMEOUT);
      });
      try {
        const outcome = await Promise.race([handle.result(), timedOut]);
        if (outcome === 'timeout') {
          await handle.cancel().catch((err: Error) => deps.logger.warn({ err }, 'tool call cancel failed'));
          throw new AppError('TIMEOUT', 'The tool did not finish in time.');
        }
        return outcome;
      } catch (err) {
        throw toAppError(err);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export type ToolsOperations = ReturnType<typeof createToolsOperations>;

function toAppError(err: unknown): unknown {
  if (!(err instanceof WorkflowFailedError)) return err;
  let cause: unknown = err;
  while (cause instanceof Error) {
    // The failure the workflow ended with: a permanent one, or the last attempt's of a retried one.
    if (cause instanceof ApplicationFailure && isFailureType(cause.type))
      return new AppError(cause.type, cause.message);
    cause = cause.cause;
  }
  // Retries spent on transient failures: the provider kept failing.
  return new AppError('PROVIDER_ERROR', "The tool's provider failed.");
}
