import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ModelMessage, ModelReply } from '../core/model/types';
import type { RunIdentity } from '../core/runs/store';
import type { PromotedRun } from '../core/runs/queue';
import type { ContentBlock, RunMetadata } from '../core/schemas/runs';

/** The workflow type operators see in the Web UI, one execution per run, keyed by its chat. */
export const AGENT_WORKFLOW_TYPE = 'agentRunWorkflow';

/** One active run per chat: the chat id is the workflow id. */
export function agentWorkflowId(chatId: string): string {
  return chatId;
}

/** At most this many model steps in a run whose steps do not name its own limit (DECISIONS). */
export const MAX_MODEL_STEPS = 8;

export interface AgentRunInput extends RunIdentity {
  planApprovalTimeoutMs: number;
}

/**
 * The memo of a run's execution: the run id, how a retried start recognises an execution that
 * carries it; the metadata, every pair, for an operator reading the execution.
 */
export function agentRunMemo(runId: string, metadata: RunMetadata): { runId: string; metadata: RunMetadata } {
  return { runId, metadata };
}

/**
 * The patch under which an execution whose run's ending promoted the chat's next queued turn
 * continues as new into it (issue 49). An execution that started before it ends as it did; its
 * chat's next turn is then started by the dispatcher.
 */
export const CHAT_QUEUE_PATCH = 'chat-queue';

/** A run's ending, as the statement that recorded it tells the workflow. */
export interface RunEnded {
  status: 'COMPLETE' | 'FAILED' | 'CANCELLED';
  error: string | null;
  /** The chat's next turn, promoted from its queue by this ending: the execution continues into it. */
  next?: PromotedRun | null;
}

/**
 * A COMPLETE run's result. A FAILED run's workflow fails (an ApplicationFailure whose type is the
 * error code), a run cancelled through Temporal ends Canceled, and a plan rejected or expired
 * fails with type PLAN_REJECTED or PLAN_EXPIRED; SKIPPED is an execution that found its run
 * already in other hands and did nothing.
 */
export interface AgentRunOutput {
  status: 'COMPLETE' | 'SKIPPED';
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
  /** What the run is doing now: "model step 2", "waiting for plan approval", a tool's name. */
  activity?: string;
}

/** The `activity` of a run in a model step, as the workflow reports it (and a snapshot shows it). */
export const modelStepActivity = (step: number) => `model step ${step}`;
/** The `activity` of a run waiting on its plan's decision. */
export const PLAN_WAIT_ACTIVITY = 'waiting for plan approval';

/** Sent by the waitpoint route once it has claimed the waitpoint's decision in the database. */
export const planDecisionSignal = defineSignal<[PlanDecision]>('planDecision');

/** Live state of a run, for operators and the snapshot's view of what the run is doing now. */
export const runStateQuery = defineQuery<AgentRunState>('runState');

/** Input of one model step (the agentStep activity). */
export interface AgentStepInput {
  runId: string;
  step: number;
  /** The assistant text of this turn's earlier steps. */
  textSoFar: string;
  /** This turn's content blocks so far: the assistant message, should this step end the turn. */
  contentBlocks: ContentBlock[];
  /** This turn's assistant and tool messages so far, after the stored history. */
  turnMessages: ModelMessage[];
  /** Set while a plan still needs approval: a reply with tool calls opens this waitpoint. */
  planWaitpoint?: { id: string; timeoutMs: number };
}

export type AgentStepResult =
  /** The run has ended (this step ended it, or a retry found it ended). */
  | ({ kind: 'ended' } & RunEnded)
  /** A cancel was asked for, or the chat deleted, before the model was called. */
  | { kind: 'stop' }
  /** The run is in another execution's hands, or ended without this one. */
  | { kind: 'other' }
  | { kind: 'missing' }
  /**
   * The model asked for tools; with `waitpointId`, the plan now waits for approval. `maxSteps`: the
   * run's own limit (its settings); executions whose steps did not say take MAX_MODEL_STEPS.
   */
  | { kind: 'tools'; reply: ModelReply; waitpointId?: string; maxSteps?: number }
  /** A local step's worker is stopping: the step runs again, as an activity task, on another. */
  | { kind: 'handoff' };

/** What goes before a new step's text: the earlier steps' text and a paragraph break, if any. */
export function textPrefix(soFar: string): string {
  return soFar ? `${soFar}\n\n` : '';
}

/** Text of successive model steps, one paragraph each, as the snapshot and the message show it. */
export function appendText(soFar: string, piece: string): string {
  return piece ? textPrefix(soFar) + piece : soFar;
}
