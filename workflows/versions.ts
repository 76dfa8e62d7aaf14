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
 */
export const WORKFLOWS_V3 = 'workflows-v3';
