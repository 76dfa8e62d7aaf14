import { NotFoundError } from '../../core/errors/app-error';
import { selectRunSnapshot } from '../../core/runs/store';
import { TERMINAL_RUN_STATUSES, toRunSnapshot, type RunSnapshot } from '../../core/schemas/runs';
import { agentWorkflowId, runStateQuery, type AgentRunState } from '../../workflows/agent.contract';
import type { OperationDeps } from '../deps';

/** A live query must not hold up a poll: past this, the tables alone answer. */
const QUERY_DEADLINE_MS = 500;

/**
 * The run, its tool calls and waitpoints in one indexed query, scoped to the caller's chat.
 * A terminal run is served from the tables alone; a live one also merges the workflow's state.
 */
export async function loadSnapshot(
  deps: OperationDeps,
  ids: { userId: string; chatId: string; runId: string },
): Promise<RunSnapshot> {
  const row = await selectRunSnapshot(deps.db.pool, ids);
  if (!row) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (!row.run) throw new NotFoundError('RUN_NOT_FOUND', 'Run not found.');
  const snapshot = toRunSnapshot(row.run);
  // A QUEUED run's workflow has not run its first task, so it has nothing to add and, with no
  // worker polling, could only hold the poll up until the deadline.
  const live =
    snapshot.status !== 'QUEUED' && !(TERMINAL_RUN_STATUSES as readonly string[]).includes(snapshot.status);
  if (live && snapshot.triggerRunId) {
    const state = await liveState(deps, ids.chatId, snapshot.triggerRunId);
    // The tables have the status (every change of it is a statement); the workflow knows its step
    // as soon as it schedules one, a moment before the step's first write.
    if (state) snapshot.currentStep = Math.max(snapshot.currentStep, state.step);
  }
  return snapshot;
}

async function liveState(
  deps: OperationDeps,
  chatId: string,
  triggerRunId: string,
): Promise<AgentRunState | undefined> {
  const { client, connection } = deps.temporal;
  try {
    return await connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
      client.workflow.getHandle(agentWorkflowId(chatId), triggerRunId).query(runStateQuery),
    );
  } catch {
    return undefined;
  }
}
