import { WorkflowNotFoundError } from '@temporalio/client';
import { reconcilerRepairs } from '../../core/metrics/registry';
import {
  CANCELLED_MESSAGE,
  finishRun,
  listRunsAwaitingSignal,
  listStaleRuns,
  listUnfinishedRuns,
  markRunsChecked,
  underReconcilerLock,
  type UnfinishedRun,
} from '../../core/runs/store';
import { listUnstartedDeliveries } from '../../core/webhooks/store';
import {
  AGENT_WORKFLOW_TYPE,
  agentWorkflowId,
  planDecisionSignal,
  runStateQuery,
} from '../../workflows/agent.contract';
import { repeatEvery } from '../../core/process/loop';
import { startDeliveries, startDelivery, starterOf } from '../temporal';
import { runIdSearchAttribute } from '../../workflows/search-attributes';
import type { OperationDeps } from '../deps';
import { startPromoted } from './start';
import { createRetention, type RetentionReport } from '../retention';

const INTERVAL_MS = 5_000;
/** Visibility lags a closing execution by a moment: each look reaches back over the last one. */
const LOOKBACK_OVERLAP_MS = 60_000;
/** How far the first look of a process reaches back. */
const FIRST_LOOKBACK_MS = 60 * 60_000;
/**
 * How long the reconciler waits for a workflow to answer its state query: one whose worker is
 * gone would otherwise hold the whole pass until Temporal's own query timeout (30 s). Unanswered,
 * it is asked again on the next pass.
 */
const QUERY_DEADLINE_MS = 2_000;
export const STOPPED_MESSAGE = 'The run stopped before it finished.';

export interface ReconcilePass {
  /** Runs ended because their execution closed, or vanished, without ending them. */
  runsEnded: number;
  deliveriesStarted: number;
  signalsResent: number;
  /** What the retention pass deleted (housekeeping, not a repair: not counted). */
  retention: RetentionReport;
}

/**
 * The safety net under the run guarantees ("every run ends, with one terminal event", "a decision
 * is never lost", "every event is delivered"): it finds what the normal path left undone and does
 * it, counting each repair (`agent_reconciler_repairs_total`). A run repaired here is a bug, or an
 * execution an operator terminated, and is logged as one. Any number of gateways may run it: one
 * pass runs at a time under an advisory lock, and every repair is idempotent besides.
 */
export function startReconciler(
  deps: OperationDeps,
  intervalMs = INTERVAL_MS,
): { stop(): Promise<void>; pass(): Promise<ReconcilePass | null> } {
  let lookedAt = Date.now() - FIRST_LOOKBACK_MS;
  const starter = starterOf(deps);
  const retention = createRetention(deps);

  const endRun = async (run: UnfinishedRun, why: string, kind: string) => {
    const ended = await finishRun(deps.db.pool, {
      runId: run.id,
      status: run.cancelRequested ? 'CANCELLED' : 'FAILED',
      error: run.cancelRequested ? CANCELLED_MESSAGE : STOPPED_MESSAGE,
      text: run.text,
      contentBlocks: [],
      images: [],
      waitpointStatus: 'CANCELLED',
    });
    if (!ended?.endedNow) return 0;
    await startDeliveries(starter, ended.deliveries);
    // Its execution is gone: nothing continues into the chat's next turn but this.
    if (ended.next) await startPromoted(deps, ended.next);
    reconcilerRepairs.inc({ kind });
    deps.logger.error(
      { runId: run.id, chatId: run.chatId, triggerRunId: run.triggerRunId, status: ended.status },
      `reconciler ended a run ${why}: a bug, unless an operator terminated its execution`,
    );
    return 1;
  };

  /**
   * Executions closed since the last look, other than by completing, whose run is still active. A
   * Completed execution has ended its run, or left it to the execution that ended it: the workflow
   * returns only after its finishRun, or having found the run already ended or another's. Those are
   * nearly every close, and looking at each (every look reaches a minute back) cost a busy stack
   * more than the turns' own history writes; a bug that left a run active anyway is still caught
   * by the stale runs' look.
   */
  const closedExecutions = async (since: number) => {
    const executions = new Map<string, string>();
    const query =
      `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running' ` +
      `AND ExecutionStatus != 'Completed' AND CloseTime > '${new Date(since).toISOString()}'`;
    for await (const execution of deps.temporal.client.workflow.list({ query })) {
      const runId = execution.typedSearchAttributes.get(runIdSearchAttribute);
      if (runId) executions.set(runId, execution.runId);
    }
    if (executions.size === 0) return 0;
    let ended = 0;
    for (const run of await listUnfinishedRuns(deps.db.pool, [...executions.keys()])) {
      const execution = executions.get(run.id);
      // A run its row gives to another execution is that one's to end.
      if (run.triggerRunId !== null && run.triggerRunId !== execution) continue;
      ended += await endRun(run, `whose execution ${execution} closed without ending it`, 'closed_execution');
    }
    return ended;
  };

  /** Active runs whose row has not moved for a while: does their execution still exist? */
  const staleRuns = async () => {
    const runs = await listStaleRuns(deps.db.pool);
    let ended = 0;
    for (const run of runs) {
      const handle = deps.temporal.client.workflow.getHandle(
        agentWorkflowId(run.chatId),
        run.triggerRunId ?? undefined,
      );
      const running = await handle.describe().then(
        (d) => d.status.name === 'RUNNING',
        (err: unknown) => (err instanceof WorkflowNotFoundError ? false : undefined),
      );
      if (running === false) ended += await endRun(run, 'whose execution no longer exists', 'lost_execution');
    }
    await markRunsChecked(
      deps.db.pool,
      runs.map((r) => r.id),
    );
    return ended;
  };

  /** Deliveries recorded while their workflow could not be started (Temporal was away). */
  const undeliveredEvents = async () => {
    let started = 0;
    for (const delivery of await listUnstartedDeliveries(deps.db.pool)) {
      if (await startDelivery(starter, delivery)) {
        started += 1;
        reconcilerRepairs.inc({ kind: 'delivery_started' });
        deps.logger.warn(
          { deliveryId: delivery.deliveryId },
          'reconciler started a delivery no workflow had taken',
        );
      }
    }
    return started;
  };

  /** Decisions claimed in the database whose signal never reached a workflow still waiting for it. */
  const lostSignals = async () => {
    let resent = 0;
    for (const w of await listRunsAwaitingSignal(deps.db.pool)) {
      const handle = deps.temporal.client.workflow.getHandle(agentWorkflowId(w.chatId), w.triggerRunId);
      const state = await deps.temporal.connection
        .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => handle.query(runStateQuery))
        .catch(() => undefined);
      if (state?.pendingWaitpointId !== w.waitpointId) continue;
      await handle.signal(planDecisionSignal, {
        waitpointId: w.waitpointId,
        approved: w.approved,
        ...(w.feedback === null ? {} : { feedback: w.feedback }),
      });
      resent += 1;
      reconcilerRepairs.inc({ kind: 'signal_resent' });
      deps.logger.warn(
        { runId: w.runId, waitpointId: w.waitpointId },
        'reconciler sent a lost plan decision again',
      );
    }
    return resent;
  };

  const pass = (): Promise<ReconcilePass | null> =>
    underReconcilerLock(deps.db.pool, async () => {
      const startedAt = Date.now();
      const report = {
        runsEnded: (await closedExecutions(lookedAt - LOOKBACK_OVERLAP_MS)) + (await staleRuns()),
        deliveriesStarted: await undeliveredEvents(),
        signalsResent: await lostSignals(),
        retention: await retention.pass(),
      };
      lookedAt = startedAt;
      return report;
    });

  const loop = repeatEvery('reconciler', intervalMs, deps.logger, pass);
  return { pass, stop: () => loop.stop() };
}
