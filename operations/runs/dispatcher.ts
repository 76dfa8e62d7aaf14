import { CANCELLED_MESSAGE, finishRun, markRunsChecked, selectQueuedRuns } from '../../core/runs/store';
import { repeatEvery } from '../../core/process/loop';
import { startDeliveries, starterOf } from '../temporal';
import type { OperationDeps } from '../deps';
import { startRun } from './start';

const INTERVAL_MS = 2_000;
/** Younger runs are still being started by the request that admitted them. */
const GRACE_SECONDS = 5;
const BATCH = 50;
/** A run found started is looked at again only after this long, should it still be QUEUED. */
const RECHECK_SECONDS = 60;

/**
 * Starts every admitted run whose workflow has not taken it yet: Temporal was unreachable at
 * admission, the gateway died between the commit and the start, or the chat's previous workflow
 * was still closing. A run cancelled (or whose chat was deleted) before any execution took it is
 * ended here, CANCELLED with its agent.failed, without starting anything. Several gateways may run
 * it at once: starts are idempotent (see startRun), and ending a run is decided by its row lock.
 */
export function startDispatcher(deps: OperationDeps, intervalMs = INTERVAL_MS): { stop(): Promise<void> } {
  let stopped = false;
  const starter = starterOf(deps);

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
      const ended = await finishRun(deps.db.pool, {
        runId: run.runId,
        status: 'CANCELLED',
        error: CANCELLED_MESSAGE,
        text: '',
        contentBlocks: [],
        images: [],
        waitpointStatus: 'CANCELLED',
      });
      if (ended) await startDeliveries(starter, ended.deliveries);
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
