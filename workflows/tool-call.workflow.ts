import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { ToolsActivities } from '../activities/tools';
import type { EmitWebhookEventInput } from '../core/schemas/events';
import type { ToolCallInput, ToolCallOutput } from './tool-call.contract';

/** Providers are polled for up to five minutes; a stalled attempt is noticed by its heartbeats. */
const TOOL_TIMEOUT = '6 minutes';
const TOOL_HEARTBEAT_TIMEOUT = '30 seconds';
/** Permanent failures (bad input, a provider's 4xx or failed job) are non-retryable by type. */
const TOOL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 5,
};
const BOOKKEEPING_TIMEOUT = '30 seconds';
const BOOKKEEPING_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
};
const EMIT_TIMEOUT = '30 seconds';
const EMIT_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 10,
};

const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>({
  startToCloseTimeout: TOOL_TIMEOUT,
  heartbeatTimeout: TOOL_HEARTBEAT_TIMEOUT,
  retry: TOOL_RETRY,
});
const bookkeeping = proxyActivities<Pick<ToolsActivities, 'markToolCallFailed'>>({
  startToCloseTimeout: BOOKKEEPING_TIMEOUT,
  retry: BOOKKEEPING_RETRY,
});
const webhooks = proxyActivities<{ emitWebhookEvent(input: EmitWebhookEventInput): Promise<unknown> }>({
  startToCloseTimeout: EMIT_TIMEOUT,
  retry: EMIT_RETRY,
});

/** A blocking tool route's call: run the tool, announce tool.completed, answer the result. */
export async function toolCallWorkflow(input: ToolCallInput): Promise<ToolCallOutput> {
  let result: ToolCallOutput;
  try {
    result = await tools.runTool.executeWithOptions({ summary: `${input.toolName} (${input.toolCallId})` }, [
      input,
    ]);
  } catch (err) {
    // Retries spent or cancelled: the row must not stay RUNNING, even while this workflow is cancelled.
    await CancellationScope.nonCancellable(() =>
      bookkeeping.markToolCallFailed({
        toolCallId: input.toolCallId,
        error: isCancellation(err) ? 'The tool call was cancelled.' : userSafeMessage(err),
      }),
    );
    throw err;
  }
  await webhooks.emitWebhookEvent({
    userId: input.userId,
    event: 'tool.completed',
    idempotencyKey: input.toolCallId,
    data: {
      ...result,
      toolCallId: input.toolCallId,
      ...(input.chatId ? { chatId: input.chatId } : {}),
      ...(input.runId ? { runId: input.runId } : {}),
    },
  });
  return result;
}

/** A permanent failure's message is written for users; anything else is summarised. */
function userSafeMessage(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure && cause.type && cause.nonRetryable) return cause.message;
    cause = cause.cause;
  }
  return "The tool's provider failed.";
}
