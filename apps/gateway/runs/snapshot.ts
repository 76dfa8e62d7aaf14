import { NotFoundError } from '../../../core/errors/app-error';
import { TERMINAL_RUN_STATUSES, type RunSnapshot } from '../../../core/schemas/runs';
import { agentWorkflowId, runStateQuery, type AgentRunState } from '../../../workflows/agent.contract';
import type { GatewayDeps } from '../deps';

/** A live query must not hold up a poll: past this, the tables alone answer. */
const QUERY_DEADLINE_MS = 500;

interface SnapshotRow {
  chatFound: boolean;
  run: Record<string, unknown> | null;
}

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(v as string).toISOString();

/**
 * The run, its tool calls and waitpoints in one indexed query, scoped to the caller's chat.
 * A terminal run is served from the tables alone; a live one also merges the workflow's state.
 */
export async function loadSnapshot(
  deps: GatewayDeps,
  ids: { userId: string; chatId: string; runId: string },
): Promise<RunSnapshot> {
  const { rows } = await deps.db.pool.query<SnapshotRow>({
    name: 'run-snapshot',
    text: `SELECT true AS "chatFound",
            (SELECT to_jsonb(r) || jsonb_build_object(
                 'toolCalls', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                     'id', t.id, 'toolName', t."toolName", 'status', t.status, 'input', t.input,
                     'result', t.result, 'error', t.error, 'startedAt', t."startedAt", 'finishedAt', t."finishedAt")
                   ORDER BY t."startedAt", t.id) FROM "ToolCall" t WHERE t."runId" = r.id), '[]'::jsonb),
                 'waitpoints', COALESCE((SELECT jsonb_agg(jsonb_build_object(
                     'id', w.id, 'type', w.type, 'status', w.status, 'plan', w.plan, 'feedback', w.feedback,
                     'createdAt', w."createdAt", 'resolvedAt', w."resolvedAt")
                   ORDER BY w."createdAt", w.id) FROM "Waitpoint" w WHERE w."runId" = r.id), '[]'::jsonb))
               FROM "Run" r WHERE r.id = $3 AND r."chatId" = c.id) AS run
       FROM "Chat" c
      WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    values: [ids.userId, ids.chatId, ids.runId],
  });
  const row = rows[0];
  if (!row) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (!row.run) throw new NotFoundError('RUN_NOT_FOUND', 'Run not found.');
  const snapshot = toSnapshot(row.run);
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
  deps: GatewayDeps,
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

function toSnapshot(r: Record<string, unknown>): RunSnapshot {
  const toolCalls = (r.toolCalls as Record<string, unknown>[]).map((t) => ({
    id: t.id as string,
    toolName: t.toolName as string,
    status: t.status as RunSnapshot['toolCalls'][number]['status'],
    input: t.input,
    result: (t.result ?? null) as RunSnapshot['toolCalls'][number]['result'],
    error: (t.error ?? null) as string | null,
    startedAt: iso(t.startedAt) as string,
    finishedAt: iso(t.finishedAt),
  }));
  const waitpoints = (r.waitpoints as Record<string, unknown>[]).map((w) => ({
    id: w.id as string,
    type: 'PLAN_APPROVAL' as const,
    status: w.status as RunSnapshot['waitpoints'][number]['status'],
    plan: w.plan as RunSnapshot['waitpoints'][number]['plan'],
    feedback: (w.feedback ?? null) as string | null,
    createdAt: iso(w.createdAt) as string,
    resolvedAt: iso(w.resolvedAt),
  }));
  return {
    id: r.id as string,
    chatId: r.chatId as string,
    messageId: r.messageId as string,
    assistantMessageId: r.assistantMessageId as string,
    status: r.status as RunSnapshot['status'],
    planMode: r.planMode as boolean,
    triggerRunId: (r.triggerRunId ?? null) as string | null,
    text: r.text as string,
    currentStep: r.currentStep as number,
    toolCalls,
    waitpoints,
    error: (r.error ?? null) as string | null,
    createdAt: iso(r.createdAt) as string,
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    updatedAt: iso(r.updatedAt) as string,
  };
}
