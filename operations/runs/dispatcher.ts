import { markRunsChecked, selectQueuedRuns } from '../../core/runs/store';
import { promoteStalledQueues, selectCancelledQueuedRuns } from '../../core/runs/queue';
import { repeatEvery } from '../../core/process/loop';
import type { OperationDeps } from '../deps';
import { endQueuedRun } from './control';
import { startPromoted, startRun } from './start';

const INTERVAL_MS = 2_000;
/** Younger runs are still being started by the request that admitted them. */
const GRACE_SECONDS = 5;
const BATCH = 50;
/** A run found started is looked at again only after this long, should it still be QUEUED. */
const RECHECK_SECONDS = 60;

/**
 * Starts every admitted run whose workflow has not taken it yet: Temporal was unreachable at
 * admission, the gateway died between the commit and the start, the chat's previous workflow
 * was still closing, or a turn promoted from its chat's queue was not continued into (its chat's
 * execution was terminated at that moment). A run cancelled (or whose chat was deleted) before any
 * execution took it is ended here, CANCELLED with its agent.failed, without starting anything; so
 * is a queued turn whose canceller died before ending it. A chat whose queue stalled with no head
 * has its next turn promoted and started. Several gateways may run it at once: starts are
 * idempotent (see startRun), and ending or promoting a run is decided under its chat's lock.
 */
export function startDispatcher(deps: OperationDeps, intervalMs = INTERVAL_MS): { stop(): Promise<void> } {
  let stopped = false;

  const tick = async () => {
    const rows = await selectQueuedRuns(deps.db.pool, {
      graceSeconds: GRACE_SECONDS,
      recheckSeconds: RECHECK_SECONDS,
      limit: BATCH,
    });
    for (const { stopRequested, ...run } of rows) {
      if (stopped) return;
      if (!stopRequested) {
        // Started, or found started: its execution takes it as soon as a worker is free, so asking
        // again every pass (while workers are busy or down) would only add load.
        if (await startRun(deps, run, 'dispatcher')) await markRunsChecked(deps.db.pool, [run.runId]);
        continue;
      }
      await endQueuedRun(deps, run.runId);
    }
    for (const runId of await selectCancelledQueuedRuns(deps.db.pool, GRACE_SECONDS)) {
      if (stopped) return;
      await endQueuedRun(deps, runId);
    }
    for (const run of await promoteStalledQueues(deps.db.pool, GRACE_SECONDS)) {
      if (stopped) return;
      deps.logger.warn({ runId: run.runId, chatId: run.chatId }, 'dispatcher promoted a stalled queued turn');
      await startPromoted(deps, run);
    }
  };

  const loop = repeatEvery('dispatcher', intervalMs, deps.logger, tick);
  return {
    async stop() {
      stopped = true;
      await loop.stop();
    },
  };
}
