import { ConflictError, NotFoundError } from '../../../core/errors/app-error';
import { agentWorkflowId, planDecisionSignal } from '../../../workflows/agent.contract';
import type { GatewayDeps } from '../deps';

interface Scope {
  userId: string;
  chatId: string;
  runId: string;
}

/** Which of chat, run and its activity is missing, for a write that matched nothing. */
async function explainMiss(deps: GatewayDeps, scope: Scope): Promise<never> {
  const { rows } = await deps.db.pool.query<{ status: string | null }>(
    `SELECT (SELECT r.status::text FROM "Run" r WHERE r.id = $3 AND r."chatId" = c.id) AS status
       FROM "Chat" c WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    [scope.userId, scope.chatId, scope.runId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (!row.status) throw new NotFoundError('RUN_NOT_FOUND', 'Run not found.');
  throw new ConflictError('RUN_NOT_ACTIVE', 'The run has already finished.');
}

/**
 * Asks a run to stop. A dispatched run is cancelled through Temporal, and its activities notice
 * through their heartbeats; a run not yet dispatched is cancelled when its workflow starts.
 */
export async function requestCancel(deps: GatewayDeps, scope: Scope): Promise<void> {
  const { rows } = await deps.db.pool.query<{ triggerRunId: string | null }>(
    `UPDATE "Run" r SET "cancelRequestedAt" = COALESCE(r."cancelRequestedAt", now()), "updatedAt" = now()
       FROM "Chat" c
      WHERE r.id = $3 AND r."chatId" = $2 AND c.id = r."chatId" AND c."userId" = $1
        AND r.status IN ('QUEUED', 'RUNNING', 'WAITING')
      RETURNING r."triggerRunId"`,
    [scope.userId, scope.chatId, scope.runId],
  );
  const row = rows[0];
  if (!row) return explainMiss(deps, scope);
  if (row.triggerRunId) await cancelWorkflow(deps, scope.chatId, row.triggerRunId);
}

/** Cancels the chat's active run, if any: deleting a chat stops its work. */
export async function cancelActiveRunOfChat(deps: GatewayDeps, chatId: string): Promise<void> {
  const { rows } = await deps.db.pool.query<{ triggerRunId: string | null }>(
    `UPDATE "Run" SET "cancelRequestedAt" = COALESCE("cancelRequestedAt", now()), "updatedAt" = now()
      WHERE "chatId" = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')
      RETURNING "triggerRunId"`,
    [chatId],
  );
  const triggerRunId = rows[0]?.triggerRunId;
  if (triggerRunId) await cancelWorkflow(deps, chatId, triggerRunId);
}

async function cancelWorkflow(deps: GatewayDeps, chatId: string, triggerRunId: string): Promise<void> {
  try {
    await deps.temporal.client.workflow.getHandle(agentWorkflowId(chatId), triggerRunId).cancel();
  } catch (err) {
    // The request is recorded; the workflow checks it when it next starts or is retried.
    deps.logger.warn({ chatId, err: (err as Error).message }, 'cancel not delivered to Temporal');
  }
}

export interface WaitpointRow {
  id: string;
  status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';
  plan: unknown;
  feedback: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
  triggerRunId: string | null;
}

/**
 * Claims the decision in the database (so a duplicate or late one gets 409), then signals the
 * workflow. Should the signal be lost, the workflow reads the claimed decision when its timer fires.
 */
export async function decideWaitpoint(
  deps: GatewayDeps,
  scope: Scope & { waitpointId: string },
  decision: { approved: boolean; feedback?: string },
): Promise<WaitpointRow> {
  const { rows } = await deps.db.pool.query<WaitpointRow>(
    `UPDATE "Waitpoint" w SET status = $5::"WaitpointStatus", feedback = $6, "resolvedAt" = now()
       FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
      WHERE w.id = $4 AND w."runId" = r.id AND r.id = $3 AND r."chatId" = $2 AND c."userId" = $1
        AND c."deletedAt" IS NULL AND w.status = 'PENDING' AND r.status IN ('QUEUED', 'RUNNING', 'WAITING')
      RETURNING w.id, w.status, w.plan, w.feedback, w."createdAt", w."resolvedAt", r."triggerRunId"`,
    [
      scope.userId,
      scope.chatId,
      scope.runId,
      scope.waitpointId,
      decision.approved ? 'APPROVED' : 'REJECTED',
      decision.feedback ?? null,
    ],
  );
  const row = rows[0];
  if (!row) {
    const found = await deps.db.pool.query<{ status: string }>(
      `SELECT w.status FROM "Waitpoint" w JOIN "Run" r ON r.id = w."runId" JOIN "Chat" c ON c.id = r."chatId"
        WHERE w.id = $4 AND r.id = $3 AND r."chatId" = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
      [scope.userId, scope.chatId, scope.runId, scope.waitpointId],
    );
    const waitpoint = found.rows[0];
    if (!waitpoint) {
      await explainMiss(deps, scope).catch((err: unknown) => {
        if (err instanceof ConflictError)
          throw new NotFoundError('WAITPOINT_NOT_FOUND', 'Waitpoint not found.');
        throw err;
      });
      throw new NotFoundError('WAITPOINT_NOT_FOUND', 'Waitpoint not found.');
    }
    if (waitpoint.status !== 'PENDING')
      throw new ConflictError('WAITPOINT_RESOLVED', 'The waitpoint was already resolved.');
    throw new ConflictError('RUN_NOT_ACTIVE', 'The run has already finished.');
  }
  if (row.triggerRunId) {
    try {
      await deps.temporal.client.workflow
        .getHandle(agentWorkflowId(scope.chatId), row.triggerRunId)
        .signal(planDecisionSignal, {
          waitpointId: row.id,
          approved: decision.approved,
          feedback: decision.feedback,
        });
    } catch (err) {
      deps.logger.warn(
        { runId: scope.runId, err: (err as Error).message },
        'plan decision signal not delivered',
      );
    }
  }
  return row;
}
