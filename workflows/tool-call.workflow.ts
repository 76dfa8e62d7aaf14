import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { ToolsActivities } from '../activities/tools';
import type { WebhooksActivities } from '../activities/webhooks';
import { BOOKKEEPING_ACTIVITY_OPTIONS, TOOL_ACTIVITY_OPTIONS, userSafeMessage } from './activity-options';
import type { ToolCallInput, ToolCallOutput } from './tool-call.contract';
import { WEBHOOK_EMIT_ACTIVITY_OPTIONS } from './webhook-delivery.contract';

const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>(TOOL_ACTIVITY_OPTIONS);
const bookkeeping = proxyActivities<Pick<ToolsActivities, 'markToolCallFailed'>>(
  BOOKKEEPING_ACTIVITY_OPTIONS,
);
const webhooks = proxyActivities<Pick<WebhooksActivities, 'emitWebhookEvent'>>(WEBHOOK_EMIT_ACTIVITY_OPTIONS);

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
        error: isCancellation(err)
          ? 'The tool call was cancelled.'
          : userSafeMessage(err, "The tool's provider failed."),
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
