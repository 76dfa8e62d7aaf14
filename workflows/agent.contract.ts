import { defineQuery, defineSignal } from '@temporalio/workflow';

/** The workflow type operators see in the Web UI, one execution per run, keyed by its chat. */
export const AGENT_WORKFLOW_TYPE = 'agentRunWorkflow';

/** One active run per chat: the chat id is the workflow id. */
export function agentWorkflowId(chatId: string): string {
  return chatId;
}

/** At most this many model steps in one run (DECISIONS). */
export const MAX_MODEL_STEPS = 8;

export interface AgentRunInput {
  runId: string;
  chatId: string;
  userId: string;
  messageId: string;
  assistantMessageId: string;
  traceId: string;
  planMode: boolean;
  planApprovalTimeoutMs: number;
}

export interface AgentRunOutput {
  status: 'COMPLETE' | 'FAILED' | 'CANCELLED';
  error?: string;
}

export interface PlanDecision {
  waitpointId: string;
  approved: boolean;
  feedback?: string;
}

export interface AgentRunState {
  status: 'QUEUED' | 'RUNNING' | 'WAITING' | 'COMPLETE' | 'FAILED' | 'CANCELLED';
  step: number;
  pendingWaitpointId: string | null;
  runningToolCallIds: string[];
}

/** Sent by the waitpoint route once it has claimed the waitpoint's decision in the database. */
export const planDecisionSignal = defineSignal<[PlanDecision]>('planDecision');

/** Live state of a run: merged into the snapshot while the run is not terminal. */
export const runStateQuery = defineQuery<AgentRunState>('runState');
