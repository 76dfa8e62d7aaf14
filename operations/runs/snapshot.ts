import { NotFoundError } from '../../core/errors/app-error';
import { selectRunSnapshot } from '../../core/runs/store';
import { toRunSnapshot, type RunSnapshot } from '../../core/schemas/runs';
import { refreshToolResult } from '../../core/storage/signing';
import { modelStepActivity, PLAN_WAIT_ACTIVITY } from '../../workflows/agent.contract';
import type { OperationDeps } from '../deps';

/**
 * The run, its tool calls and waitpoints in one indexed read, scoped to the caller's chat: the
 * activities write everything the snapshot shows as they go, each model step its number from its
 * start (see gateStep), so no poll asks the workflow anything. (A model step is a local activity:
 * a query would wait behind it for up to 8 s.)
 */
export async function loadSnapshot(
  deps: OperationDeps,
  ids: { userId: string; chatId: string; runId: string },
): Promise<RunSnapshot> {
  return (await loadSnapshotAt(deps, ids)).snapshot;
}

/** The snapshot and the number of the last stream event it reflects (read by the same statement). */
export async function loadSnapshotAt(
  deps: OperationDeps,
  ids: { userId: string; chatId: string; runId: string },
): Promise<{ snapshot: RunSnapshot; eventSeq: number }> {
  const row = await selectRunSnapshot(deps.db.pool, ids);
  if (!row) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (!row.run) throw new NotFoundError('RUN_NOT_FOUND', 'Run not found.');
  return { snapshot: snapshotOf(deps, row.run, ids.userId), eventSeq: Number(row.run.eventSeq ?? 0) };
}

/** A run as RUN_SNAPSHOT_JSON reads it, as the API shows it to its owner `userId`. */
export function snapshotOf(deps: OperationDeps, run: Record<string, unknown>, userId: string): RunSnapshot {
  const snapshot = toRunSnapshot(run);
  snapshot.toolCalls = snapshot.toolCalls.map((call) => {
    const result = refreshToolResult(deps.config, call.result, userId);
    return result === call.result ? call : { ...call, result };
  });
  snapshot.activity = activityOf(snapshot);
  return snapshot;
}

/**
 * What a live run is doing, as its tables show it: waiting on its pending plan, else the tool call
 * running (a step's calls run one at a time), else the model step it is in. Null for a run not yet
 * started or already ended.
 */
function activityOf(snapshot: RunSnapshot): string | null {
  if (snapshot.status === 'WAITING' && snapshot.waitpoints.some((w) => w.status === 'PENDING'))
    return PLAN_WAIT_ACTIVITY;
  if (snapshot.status !== 'RUNNING') return null;
  return (
    snapshot.toolCalls.find((t) => t.status === 'RUNNING')?.toolName ??
    modelStepActivity(Math.max(1, snapshot.currentStep))
  );
}
