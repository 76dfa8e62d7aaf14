import { NotFoundError } from '../../core/errors/app-error';
import {
  claimLiveStateQuery,
  selectRunSnapshot,
  storeLiveState,
  type StoredLiveState,
} from '../../core/runs/store';
import { TERMINAL_RUN_STATUSES, toRunSnapshot, type RunSnapshot } from '../../core/schemas/runs';
import { refreshFileUrls } from '../../core/storage/signing';
import {
  agentWorkflowId,
  modelStepActivity,
  PLAN_WAIT_ACTIVITY,
  runStateQuery,
  type AgentRunState,
} from '../../workflows/agent.contract';
import type { OperationDeps } from '../deps';

/** A live query must not hold up a poll: past this, the tables alone answer. */
const QUERY_DEADLINE_MS = 500;
/**
 * How old the workflow's view may be when a poll shows it: however many clients poll a run, on
 * however many gateways, its workflow is asked at most once per run per second (RunLiveState holds
 * the last answer and who may ask next).
 */
export const LIVE_STATE_TTL_MS = 1_000;

type LiveState = Pick<AgentRunState, 'step' | 'activity'>;
export type LiveStates = (
  ids: { runId: string; chatId: string; triggerRunId: string },
  stored: StoredLiveState | null,
) => Promise<LiveState | undefined>;

/**
 * The workflow's own view of live runs: the stored answer while it is recent; past that, the one
 * gateway that claims the next query asks the workflow and stores the answer for everyone. Polls
 * of one run arriving together in this process share one claim.
 */
export function createLiveStates(deps: OperationDeps): LiveStates {
  const inFlight = new Map<string, Promise<LiveState | undefined>>();
  const fromStore = (stored: StoredLiveState | null): LiveState | undefined =>
    stored?.step === null || stored?.step === undefined
      ? undefined
      : { step: stored.step, activity: stored.activity ?? undefined };
  return (ids, stored) => {
    if (stored?.fresh) return Promise.resolve(fromStore(stored));
    const pending = inFlight.get(ids.runId);
    if (pending) return pending;
    const asked = (async () => {
      if (!(await claimLiveStateQuery(deps.db.bookkeeping, ids.runId, LIVE_STATE_TTL_MS))) {
        return fromStore(stored);
      }
      const state = await liveState(deps, ids.chatId, ids.triggerRunId);
      if (!state) return fromStore(stored);
      await storeLiveState(deps.db.bookkeeping, ids.runId, {
        step: state.step,
        activity: state.activity ?? null,
      });
      return state;
    })().finally(() => inFlight.delete(ids.runId));
    inFlight.set(ids.runId, asked);
    return asked;
  };
}

/**
 * The run, its tool calls and waitpoints in one indexed read, scoped to the caller's chat: the
 * tables hold everything the snapshot shows, written by the activities as they go. A live run
 * adds what only its workflow knows (what it is doing this moment, the step it just scheduled),
 * from a query asked at most once a second across all gateways (see createLiveStates).
 */
export async function loadSnapshot(
  deps: OperationDeps,
  liveStates: LiveStates,
  ids: { userId: string; chatId: string; runId: string },
): Promise<RunSnapshot> {
  return (await loadSnapshotAt(deps, liveStates, ids)).snapshot;
}

/** The snapshot and the number of the last stream event it reflects (read by the same statement). */
export async function loadSnapshotAt(
  deps: OperationDeps,
  liveStates: LiveStates,
  ids: { userId: string; chatId: string; runId: string },
): Promise<{ snapshot: RunSnapshot; eventSeq: number }> {
  const row = await selectRunSnapshot(deps.db.pool, ids, LIVE_STATE_TTL_MS);
  if (!row) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (!row.run) throw new NotFoundError('RUN_NOT_FOUND', 'Run not found.');
  const snapshot = refreshFileUrls(deps.config, toRunSnapshot(row.run));
  const eventSeq = Number(row.run.eventSeq ?? 0);
  // A QUEUED run's workflow has not run its first task, so it has nothing to add and, with no
  // worker polling, could only hold the poll up until the deadline.
  const live =
    snapshot.status !== 'QUEUED' && !(TERMINAL_RUN_STATUSES as readonly string[]).includes(snapshot.status);
  if (live && snapshot.triggerRunId) {
    const state =
      evidentState(snapshot) ??
      (await liveStates(
        { runId: snapshot.id, chatId: ids.chatId, triggerRunId: snapshot.triggerRunId },
        row.live,
      ));
    // The tables have the status (every change of it is a statement); the workflow knows its step
    // as soon as it schedules one, a moment before the step's first write. A view older than the
    // tables (stored during a step the text has since moved past) gives way to what they show, so
    // a snapshot never names an earlier step's work beside a later step's text.
    if (state && state.step >= snapshot.currentStep) {
      snapshot.currentStep = state.step;
      snapshot.activity = state.activity ?? null;
    } else if (state) {
      snapshot.activity = tablesActivity(snapshot);
    }
  }
  return { snapshot, eventSeq };
}

/**
 * What the tables alone say a live run's workflow is doing, where they leave no doubt, so the
 * workflow need not be asked: waiting on its plan (a plan opens at step 1, and the run stays
 * WAITING until it is decided), or in its first model step with nothing else begun (no tool call,
 * no plan): a plain turn is never queried. Otherwise undefined: the workflow knows a step it has
 * scheduled a moment before the step writes anything.
 */
function evidentState(snapshot: RunSnapshot): LiveState | undefined {
  if (snapshot.status === 'WAITING' && snapshot.waitpoints.some((w) => w.status === 'PENDING'))
    return { step: Math.max(1, snapshot.currentStep), activity: PLAN_WAIT_ACTIVITY };
  if (
    snapshot.status === 'RUNNING' &&
    snapshot.currentStep <= 1 &&
    !snapshot.toolCalls.length &&
    !snapshot.waitpoints.length
  )
    return { step: 1, activity: modelStepActivity(1) };
  return undefined;
}

/**
 * What a live run is doing as its tables show it: the tool call running (a step's calls run one at
 * a time), else the model step whose text is being written.
 */
function tablesActivity(snapshot: RunSnapshot): string {
  return (
    snapshot.toolCalls.find((t) => t.status === 'RUNNING')?.toolName ??
    modelStepActivity(snapshot.currentStep)
  );
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
