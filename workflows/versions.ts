import { patched } from '@temporalio/workflow';

/**
 * The versions of the workflow code, as patch markers (`patched()`). A workflow change that would
 * break the replay of executions started before it is made behind the next version's marker, and
 * every workflow checks the newest marker first: an execution started today records one marker
 * (a marker event and Temporal's TemporalChangeVersion upsert), however many versions came before.
 * Histories of every version are in test/replay/histories and must keep replaying.
 *
 * - v1: no marker (workflows/legacy/agent-v1.ts, and the first shapes of the other workflows).
 * - turn-v2, tool-outbox: a turn is one step activity per model call, its bookkeeping in the
 *   statements that change its rows; a tool call records tool.completed with its success.
 * - workflows-v3: Temporal's OpenTelemetry interceptors in every workflow (they draw span ids from
 *   the workflow's seeded random numbers, as uuid4() does, so an execution has them from its start
 *   or never); a delivery that gives up ends Failed rather than Completed.
 * - workflows-v4: a tool that runs on the worker's own CPU in moments (crop_image) is a local
 *   activity, in a turn and in a blocking tool call (activity-options.ts LOCAL_TOOL_CALL).
 * - workflows-v5: the OpenTelemetry interceptors trace an execution only when its start carried a
 *   trace (see interceptors.ts), and are not even evaluated otherwise. The decision is read from
 *   the start's header, which a replay sees as the first run did, so the execution draws the
 *   same random numbers on every worker, traced or not.
 * - workflows-v6: a model step is a local activity (activity-options.ts MODEL_STEP_LOCAL), so a
 *   plain turn is one workflow task; a delivery's first attempt is a local activity in the
 *   delivery's first workflow task, and only a failed first attempt schedules the rest as an
 *   activity with the spec's retries (WEBHOOK_FIRST_POST, WEBHOOK_RETRY).
 */
export const WORKFLOWS_V3 = 'workflows-v3';
export const WORKFLOWS_V4 = 'workflows-v4';
export const WORKFLOWS_V5 = 'workflows-v5';
export const WORKFLOWS_V6 = 'workflows-v6';

/** Whether the execution is v6. */
export function v6(): boolean {
  return patched(WORKFLOWS_V6);
}

/** Whether the execution is v6, or began as v5 (and keeps v5's shape where v6 differs). */
export function v5OrLater(): boolean {
  return v6() || patched(WORKFLOWS_V5);
}

/** Whether the execution is v5 or later, or began as v4 (and keeps v4's shape where later ones differ). */
export function v4OrLater(): boolean {
  return v5OrLater() || patched(WORKFLOWS_V4);
}

/** Whether the execution is v4 or later, or began as v3 (and keeps v3's shape where later ones differ). */
export function v3OrLater(): boolean {
  return v4OrLater() || patched(WORKFLOWS_V3);
}
