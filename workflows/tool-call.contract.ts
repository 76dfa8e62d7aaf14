import type { ToolResult } from '../core/schemas/events';
import type { RunToolInput } from '../core/tools/types';

/** The workflow type operators see in the Web UI: one execution per blocking tool call. */
export const TOOL_CALL_WORKFLOW_TYPE = 'toolCallWorkflow';

/** One execution per tool call: a retried start finds the same execution. */
export function toolCallWorkflowId(toolCallId: string): string {
  return `tool:${toolCallId}`;
}

/** Started on config.TEMPORAL_TASK_QUEUE, the queue every worker serves. */
export type ToolCallInput = RunToolInput;
export type ToolCallOutput = ToolResult;

/** Tools that run as a local activity (activity-options.ts LOCAL_TOOL_CALL); the others are activity tasks. */
const LOCAL_TOOLS: ReadonlySet<string> = new Set(['crop_image']);

export function runsAsLocalActivity(toolName: string): boolean {
  return LOCAL_TOOLS.has(toolName);
}
