import { NotFoundError } from '../../core/errors/app-error';
import { selectRunSnapshot } from '../../core/runs/store';
import { TERMINAL_RUN_STATUSES, toRunSnapshot, type RunSnapshot } from '../../core/schemas/runs';
import { agentWorkflowId, runStateQuery, type AgentRunState } from '../../workflows/agent.contract';
import type { OperationDeps } from '../deps';

/** A live query must not hold up a poll: past this, the tables alone answer. */
const QUERY_DEADLINE_MS = 500;
/**
 * How old the workflow's view may be when a poll shows it: however many clients poll a run, this
 * process asks its workflow at most once per run per second (concurrent polls share one query).
 */
const LIVE_STATE_TTL_MS = 1_000;
/** Bounds the cache: past this many runs, expired answers are dropped, then the oldest. */
const LIVE_STATE_ENTRIES = 10_000;

export type LiveStates = (chatId: string, triggerRunId: string) => Promise<AgentRunState | undefined>;

/** The workflow's own view of live runs, asked through its query and shared for a second. */
export function createLiveStates(deps: OperationDeps): LiveStates {
  const cache = new Map<string, { expires: number; state: Promise<AgentRunState | undefined> }>();
  return (chatId, triggerRunId) => {
    const now = Date.now();
    const hit = cache.get(triggerRunId);
    if (hit && hit.expires > now) return hit.state;
    cache.delete(triggerRunId);
    if (cache.size >= LIVE_STATE_ENTRIES) {
      for (const [key, entry] of cache) if (entry.expires <= now) cache.delete(key);
      for (const key of cache.keys()) {
        if (cache.size < LIVE_STATE_ENTRIES) break;
        cache.delete(key);
      }
    }
    const state = liveState(deps, chatId, triggerRunId);
    cache.set(triggerRunId, { expires: now + LIVE_STATE_TTL_MS, state });
    return state;
  };
}

/**
 * The run, its tool calls and waitpoints in one indexed read, scoped to the caller's chat: the
 * tables hold everything the snapshot shows, written by the activities as they go. A live run
 * adds what only its workflow knows (what it is doing this moment, the step it just scheduled),
 * from a query asked at most once a second (see createLiveStates).
 */
export async function loadSnapshot(
  deps: OperationDeps,
  liveStates: LiveStates,
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
    const state = await liveStates(ids.chatId, snapshot.triggerRunId);
    // The tables have the status (every change of it is a statement); the workflow knows its step
    // as soon as it schedules one, a moment before the step's first write.
    if (state) {
      snapshot.currentStep = Math.max(snapshot.currentStep, state.step);
      snapshot.activity = state.activity ?? null;
    }
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
