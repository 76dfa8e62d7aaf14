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

/** Tools that run as a local activity in v4 executions (activity-options.ts LOCAL_TOOL_CALL). */
const LOCAL_TOOLS: ReadonlySet<string> = new Set(['crop_image']);

export function runsAsLocalActivity(toolName: string): boolean {
  return LOCAL_TOOLS.has(toolName);
}

/** Marks executions whose runTool records tool.completed with the call's success (no emit step). */
export const TOOL_OUTBOX_PATCH = 'tool-outbox';
