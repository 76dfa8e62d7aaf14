import {
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { ToolsActivities } from '../activities/tools';
import type { WebhooksActivities } from '../activities/webhooks';
import { BOOKKEEPING, LOCAL_TOOL_CALL, TOOL_CALL } from './activity-options';
import { userSafeFailure } from './failures';
import { v4OrLater, WORKFLOWS_V3 } from './versions';
import {
  TOOL_OUTBOX_PATCH,
  runsAsLocalActivity,
  type ToolCallInput,
  type ToolCallOutput,
} from './tool-call.contract';

const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>(TOOL_CALL);
const localTools = proxyLocalActivities<Pick<ToolsActivities, 'runTool'>>(LOCAL_TOOL_CALL);
const bookkeeping = proxyActivities<Pick<ToolsActivities, 'markToolCallFailed'>>(BOOKKEEPING);
// Only executions from before the tool-outbox patch announce tool.completed in a step of their own.
const webhooks = proxyActivities<Pick<WebhooksActivities, 'emitWebhookEvent'>>(BOOKKEEPING);

/** A blocking tool route's call: run the tool (which records tool.completed with its success). */
export async function toolCallWorkflow(input: ToolCallInput): Promise<ToolCallOutput> {
  const v4 = v4OrLater();
  const outboxed = v4 || patched(WORKFLOWS_V3) || patched(TOOL_OUTBOX_PATCH);
  const runner = v4 && runsAsLocalActivity(input.toolName) ? localTools : tools;
  let result: ToolCallOutput;
  try {
    result = await runner.runTool.executeWithOptions({ summary: `${input.toolName} (${input.toolCallId})` }, [
      input,
    ]);
  } catch (err) {
    // Retries spent or cancelled: the row must not stay RUNNING, even while this workflow is cancelled.
    await CancellationScope.nonCancellable(() =>
      bookkeeping.markToolCallFailed({
        toolCallId: input.toolCallId,
        error: isCancellation(err)
          ? 'The tool call was cancelled.'
          : userSafeFailure(err, "The tool's provider failed.").message,
      }),
    );
    throw err;
  }
  if (!outboxed) {
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
  }
  return result;
}
