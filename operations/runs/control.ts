import { ConflictError, NotFoundError } from '../../core/errors/app-error';
import type { CancelledRun } from '../../core/runs/queue';
import {
  CANCELLED_MESSAGE,
  claimPlanDecision,
  explainRunMiss,
  finishRun,
  requestChatRunCancel,
  requestRunCancel,
  selectWaitpointPlan,
  type Decider,
  type DecisionMiss,
  type RunScope,
  type WaitpointRow,
} from '../../core/runs/store';
import { agentWorkflowId, planDecisionSignal } from '../../workflows/agent.contract';
import { runningExecutionOf, startDeliveries, starterOf } from '../temporal';
import { planHashOf } from '../../core/schemas/runs';
import type { OperationDeps } from '../deps';
import { startPromoted } from './start';

function missError(miss: DecisionMiss): Error {
  switch (miss) {
    case 'CHAT_NOT_FOUND':
      return new NotFoundError(miss, 'Chat not found.');
    case 'RUN_NOT_FOUND':
      return new NotFoundError(miss, 'Run not found.');
    case 'WAITPOINT_NOT_FOUND':
      return new NotFoundError(miss, 'Waitpoint not found.');
    case 'RUN_NOT_ACTIVE':
      return new ConflictError(miss, 'The run has already finished.');
    case 'WAITPOINT_RESOLVED':
      return new ConflictError(miss, 'The waitpoint was already resolved.');
    case 'PLAN_CHANGED':
      return new ConflictError(
        miss,
        'The plan pending approval is not the one whose planHash was sent; poll the run and decide the plan it shows.',
      );
  }
}

/**
 * Cancels a run. The cancel is recorded first, under the run's row lock: from then on the run ends
 * CANCELLED whatever happens (a 202 wins the race with the model's last word), and a run that
 * ended first answers 409 RUN_NOT_ACTIVE. Then its execution is told, so that it stops at once;
 * an execution that has not started yet, or does not hear it, meets the recorded cancel at its
 * next step, and a run never dispatched is ended by the dispatcher. A turn still waiting in its
 * chat's queue has no execution: it is ended here, at once (and never promoted once its cancel is
 * recorded).
 */
export async function requestCancel(deps: OperationDeps, scope: RunScope): Promise<void> {
  const marked = await requestRunCancel(deps.db.pool, scope);
  if (!marked) throw missError(await explainRunMiss(deps.db.pool, scope));
  await settleCancelled(deps, scope.chatId, [{ runId: scope.runId, ...marked }]);
}

/** Cancels the chat's active runs, its head and its queued turns: deleting a chat stops its work. */
export async function cancelActiveRunOfChat(deps: OperationDeps, chatId: string): Promise<void> {
  await settleCancelled(deps, chatId, await requestChatRunCancel(deps.db.pool, chatId));
}

/**
 * After a cancel is recorded (by the cancel route, an interrupt, a chat's deletion): a queued turn
 * is ended now, CANCELLED with its agent.failed; the head's execution is told. Should this process
 * die first, the dispatcher ends the queued turns and the head meets its cancel at its next step.
 */
export async function settleCancelled(
  deps: OperationDeps,
  chatId: string,
  runs: readonly CancelledRun[],
): Promise<void> {
  for (const run of runs) {
    if (run.queued) await endQueuedRun(deps, run.runId);
    else await cancelExecution(deps, chatId, run.runId, run.triggerRunId);
  }
}

/**
 * Ends a run no execution has taken (a queued turn, a head cancelled before its start): CANCELLED,
 * with its agent.failed, and the chat's next turn started should the ending promote one.
 */
export async function endQueuedRun(deps: OperationDeps, runId: string): Promise<void> {
  const ended = await finishRun(deps.db.pool, {
    runId,
    status: 'CANCELLED',
    error: CANCELLED_MESSAGE,
    text: '',
    contentBlocks: [],
    images: [],
    waitpointStatus: 'CANCELLED',
  });
  if (!ended) return;
  await startDeliveries(starterOf(deps), ended.deliveries);
  if (ended.next) await startPromoted(deps, ended.next);
}

async function cancelExecution(
  deps: OperationDeps,
  chatId: string,
  runId: string,
  triggerRunId: string | null,
): Promise<void> {
  const { client } = deps.temporal;
  try {
    // Before its first step the run's row does not name its execution yet; the chat's running
    // execution is the run's only if it carries the run (it may still be the previous run's).
    const execution = triggerRunId ?? (await runningExecutionOf(client, chatId, runId));
    if (execution) await client.workflow.getHandle(agentWorkflowId(chatId), execution).cancel();
  } catch (err) {
    deps.logger.warn({ chatId, runId, err: (err as Error).message }, 'cancel recorded; Temporal not told');
  }
}

/**
 * The plan the decider saw, named by its hash: the pending plan when the hash is its own (the
 * claim then holds only while the waitpoint still has that plan, under its row lock), else 409
 * PLAN_CHANGED. Without a hash, no check; a waitpoint not pending is the claim's to explain.
 */
async function planSeen(
  deps: OperationDeps,
  scope: RunScope & { waitpointId: string },
  planHash: string | undefined,
): Promise<unknown> {
  if (planHash === undefined) return undefined;
  const current = await selectWaitpointPlan(deps.db.pool, scope);
  if (!current || current.status !== 'PENDING') return undefined;
  if (planHashOf(current.plan) !== planHash) throw missError('PLAN_CHANGED');
  return current.plan;
}

/**
 * A plan decision, in one obvious sequence: (1) claim it in the database, which alone decides who
 * wins (a duplicate gets WAITPOINT_RESOLVED, a decision after a cancel RUN_NOT_ACTIVE) and, for an
 * approval, moves the run back to RUNNING; (2) signal the workflow, which acts on it at once. The
 * design has waitpoints be signals; the database has the last word because a signal can be lost
 * (this process dying between the two): the reconciler then signals the claimed decision again,
 * and a workflow whose timer fires first reads the claim back instead of expiring the plan.
 */
export async function decideWaitpoint(
  deps: OperationDeps,
  scope: RunScope & { waitpointId: string },
  decision: { approved: boolean; feedback?: string; planHash?: string },
  decider: Decider,
): Promise<WaitpointRow> {
  const claimed = await claimPlanDecision(
    deps.db.pool,
    scope,
    { ...decision, expectedPlan: await planSeen(deps, scope, decision.planHash) },
    decider,
  );
  if (typeof claimed === 'string') throw missError(claimed);
  try {
    await deps.temporal.client.workflow
      .getHandle(agentWorkflowId(scope.chatId), claimed.triggerRunId ?? undefined)
      .signal(planDecisionSignal, {
        waitpointId: claimed.id,
        approved: decision.approved,
        feedback: decision.feedback,
      });
  } catch (err) {
    deps.logger.warn(
      { runId: scope.runId, err: (err as Error).message },
      'decision recorded; signal left to the reconciler',
    );
  }
  return claimed;
}
