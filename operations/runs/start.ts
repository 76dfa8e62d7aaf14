import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { inTrace } from '../../core/telemetry/tracing';
import { agentWorkflowId, type AgentRunInput } from '../../workflows/agent.contract';
import type { Transport } from '../../core/schemas/common';
import type { RunMetadata } from '../../core/schemas/runs';
import type { PromotedRun } from '../../core/runs/queue';
import { runAwaitsStart } from '../../core/runs/store';
import { runningExecutionOf, startAgentRun } from '../temporal';
import type { OperationDeps } from '../deps';

/** A start that has not answered by then leaves the run to the dispatcher. */
const START_DEADLINE_MS = 5_000;
/** How long an admission waits for the chat's previous execution to finish closing. */
const CLOSING_WAIT_MS = 3_000;
/**
 * A run ends in its execution's last step, and the execution closes a workflow task later: a
 * moment, seconds when Temporal is busy. An admission into a chat whose previous run ended this
 * recently waits for that execution to close before it starts the next one.
 */
export const RECENTLY_ENDED_SECONDS = 10;

/**
 * The run's workflow input, and what goes in its records in Temporal only: the route that admitted
 * it and its metadata.
 */
export type RunToStart = Omit<AgentRunInput, 'planApprovalTimeoutMs'> & {
  via: Transport;
  metadata?: RunMetadata;
};

/**
 * Who asks for the start: the request that admitted the run, which nothing else has started yet
 * (the dispatcher leaves a run that young alone), or the dispatcher, whose run some earlier start
 * may have taken.
 */
export type StartedBy = 'admission' | 'dispatcher';

/**
 * Starts the chat's workflow for this run. Safe to call again (the dispatcher does): a start that
 * finds the chat's workflow running accepts it when that execution carries this run, and
 * otherwise (the previous run's execution still closing) waits for it briefly, once. An admission
 * that knows the previous run's execution may still be closing (`closingExecution`, a run that
 * ended in the last RECENTLY_ENDED_SECONDS) waits for it first: a turn sent the moment the last
 * one ended, as a client chaining turns does, costs Temporal a wait and a start, not a refused
 * start besides. The run's row is written by its own execution (see gateStep), not here. Returns
 * the Temporal run id, or null when the run is not started yet (the dispatcher will).
 */
export async function startRun(
  deps: OperationDeps,
  run: RunToStart,
  by: StartedBy,
  closingExecution: string | null = null,
): Promise<string | null> {
  if (closingExecution) await executionClosed(deps, run.chatId, closingExecution);
  // The dispatcher's run may have been taken since it was read: an execution may have continued as
  // new into it (a turn its chat's queue promoted) and even ended it, and a start then would open
  // an execution with nothing to do. The dispatcher asks again on its next pass if it still waits.
  const waits = async () => by === 'admission' || (await runAwaitsStart(deps.db.pool, run.runId));
  if (!(await waits())) return null;
  const first = await tryStart(deps, run, by);
  if (first !== PREVIOUS_RUN_CLOSING) return first;
  await executionClosed(deps, run.chatId);
  if (!(await waits())) return null;
  const second = await tryStart(deps, run, by);
  return second === PREVIOUS_RUN_CLOSING ? null : second;
}

const PREVIOUS_RUN_CLOSING = Symbol('previous run closing');

/** Waits, briefly, for the chat's execution (its latest, or the one named) to close. */
async function executionClosed(deps: OperationDeps, chatId: string, executionId?: string): Promise<void> {
  const { client, connection } = deps.temporal;
  await connection
    .withDeadline(Date.now() + CLOSING_WAIT_MS, () =>
      client.workflow.getHandle(agentWorkflowId(chatId), executionId).result(),
    )
    .catch(() => undefined);
}

async function tryStart(
  deps: OperationDeps,
  run: RunToStart,
  by: StartedBy,
): Promise<string | null | typeof PREVIOUS_RUN_CLOSING> {
  const { client, connection } = deps.temporal;
  const { via, metadata, ...input } = run;
  try {
    // The run's trace, whether the send's request starts it or the dispatcher does later.
    const handle = await inTrace(run.traceId, () =>
      connection.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        startAgentRun(
          { client, taskQueue: deps.config.TEMPORAL_TASK_QUEUE },
          { ...input, planApprovalTimeoutMs: deps.config.PLAN_APPROVAL_TIMEOUT },
          via,
          metadata,
        ),
      ),
    );
    return handle.firstExecutionRunId;
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      deps.logger.warn({ runId: run.runId, err }, 'run not started yet; the dispatcher will retry');
      return null;
    }
    // A turn sent the moment its chat's previous run ended finds that run's execution still
    // closing (the run ends in its last step, the execution a workflow task later): at admission
    // the running execution cannot be this run's, so it is not asked which run it carries.
    if (by === 'admission') return PREVIOUS_RUN_CLOSING;
    return (await runningExecutionOf(client, run.chatId, run.runId)) ?? PREVIOUS_RUN_CLOSING;
  }
}

/**
 * Starts a turn its chat's queue has just promoted, where no ending workflow continues into it (an
 * ending by the dispatcher, the reconciler or a cancel). Its start may race another's (the
 * dispatcher's): the first wins and the other finds it (see tryStart); one not started now is the
 * dispatcher's.
 */
export async function startPromoted(deps: OperationDeps, promoted: PromotedRun): Promise<void> {
  // Its keywords are for a continue-as-new, which has no Buffer to count them with; a start counts them.
  const { metadataKeywords: _keywords, ...run } = promoted;
  if ((await startRun(deps, run, 'dispatcher')) === null)
    deps.logger.info({ runId: run.runId }, 'promoted run not started yet; the dispatcher will');
}
