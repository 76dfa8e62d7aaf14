import {
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { ToolsActivities } from '../activities/tools';
import { BOOKKEEPING, LOCAL_TOOL_CALL, TOOL_CALL } from './activity-options';
import { userSafeFailure } from './failures';
import { runsAsLocalActivity, type ToolCallInput, type ToolCallOutput } from './tool-call.contract';

const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>(TOOL_CALL);
const localTools = proxyLocalActivities<Pick<ToolsActivities, 'runTool'>>(LOCAL_TOOL_CALL);
const bookkeeping = proxyActivities<Pick<ToolsActivities, 'markToolCallFailed'>>(BOOKKEEPING);

/** A blocking tool route's call: run the tool (which records tool.completed with its success). */
export async function toolCallWorkflow(input: ToolCallInput): Promise<ToolCallOutput> {
  const runner = runsAsLocalActivity(input.toolName) ? localTools : tools;
  try {
    return await runner.runTool.executeWithOptions({ summary: `${input.toolName} (${input.toolCallId})` }, [
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
}
