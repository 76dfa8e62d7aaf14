import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { AGENT_WORKFLOW_TYPE, agentWorkflowId, type AgentRunInput } from '../../../workflows/agent.contract';
import {
  chatIdSearchAttribute,
  runIdSearchAttribute,
  userIdSearchAttribute,
} from '../../../workflows/search-attributes';
import type { GatewayDeps } from '../deps';

/** A start that has not answered by then leaves the run to the dispatcher. */
const START_DEADLINE_MS = 5_000;

export interface RunToStart {
  id: string;
  chatId: string;
  userId: string;
  messageId: string;
  assistantMessageId: string;
  traceId: string;
  planMode: boolean;
}

/**
 * Starts the chat's workflow for this run and records its Temporal run id. Safe to call again:
 * a start that finds the chat's workflow running attaches when that execution is this run's,
 * and otherwise (a previous run still closing) leaves the run QUEUED for a later attempt.
 * Returns the Temporal run id, or null when the run is not started yet.
 */
export async function startRun(deps: GatewayDeps, run: RunToStart): Promise<string | null> {
  const first = await tryStart(deps, run);
  if (first !== PREVIOUS_RUN_CLOSING) return first;
  // The chat's previous run has reached its terminal state and is sending its last event; a
  // send right after it should not wait for the dispatcher, so wait for it briefly, once.
  await previousExecutionClosed(deps, run.chatId);
  const second = await tryStart(deps, run);
  return second === PREVIOUS_RUN_CLOSING ? null : second;
}

const PREVIOUS_RUN_CLOSING = Symbol('previous run closing');
/** How long an admission waits for the chat's previous execution to finish closing. */
const CLOSING_WAIT_MS = 3_000;

async function previousExecutionClosed(deps: GatewayDeps, chatId: string): Promise<void> {
  const { client, connection } = deps.temporal;
  await connection
    .withDeadline(Date.now() + CLOSING_WAIT_MS, () =>
      client.workflow.getHandle(agentWorkflowId(chatId)).result(),
    )
    .catch(() => undefined);
}

async function tryStart(
  deps: GatewayDeps,
  run: RunToStart,
): Promise<string | null | typeof PREVIOUS_RUN_CLOSING> {
  const { client, connection } = deps.temporal;
  const input: AgentRunInput = {
    runId: run.id,
    chatId: run.chatId,
    userId: run.userId,
    messageId: run.messageId,
    assistantMessageId: run.assistantMessageId,
    traceId: run.traceId,
    planMode: run.planMode,
    planApprovalTimeoutMs: deps.config.PLAN_APPROVAL_TIMEOUT,
  };
  let triggerRunId: string | null;
  try {
    const handle = await connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      client.workflow.start(AGENT_WORKFLOW_TYPE, {
        workflowId: agentWorkflowId(run.chatId),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        memo: { runId: run.id },
        typedSearchAttributes: [
          { key: chatIdSearchAttribute, value: run.chatId },
          { key: runIdSearchAttribute, value: run.id },
          { key: userIdSearchAttribute, value: run.userId },
        ],
        staticSummary: `Agent run ${run.id}${run.planMode ? ' (plan mode)' : ''}`,
      }),
    );
    triggerRunId = handle.firstExecutionRunId;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      deps.logger.warn({ runId: run.id, err }, 'run not started yet; the dispatcher will retry');
      return null;
    }
    triggerRunId = await runningExecutionOf(deps, run);
    if (!triggerRunId) return PREVIOUS_RUN_CLOSING;
  }
  await deps.db.pool.query(`UPDATE "Run" SET "triggerRunId" = $2 WHERE id = $1 AND "triggerRunId" IS NULL`, [
    run.id,
    triggerRunId,
  ]);
  return triggerRunId;
}

/** The running execution's run id when it carries this run (an earlier start did succeed). */
async function runningExecutionOf(deps: GatewayDeps, run: RunToStart): Promise<string | null> {
  try {
    const description = await deps.temporal.client.workflow.getHandle(agentWorkflowId(run.chatId)).describe();
    if (description.status.name !== 'RUNNING') return null;
    const memo = (await description.memo) as { runId?: string } | undefined;
    return memo?.runId === run.id ? description.runId : null;
  } catch {
    return null;
  }
}
