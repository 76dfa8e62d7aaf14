import type { NotificationHub } from '../../core/db/notification-hub';
import type { RunScope } from '../../core/runs/store';
import type { RunSnapshot } from '../../core/schemas/runs';
import type { OperationDeps } from '../deps';
import { loadSnapshot } from './snapshot';
import { wakeUps } from '../wake-ups';

/**
 * The caller's run as it changes: read now, then again at each notification of it (every write of
 * a run sends one, see migration run_events; the hub wakes every subscriber when its connection is
 * lost or regained, the one way a notification can go unheard); until `signal` aborts or the
 * caller stops reading. An assistant waiting on a run over MCP costs a read per change, and none
 * while the run is idle.
 */
export async function* watchRun(
  deps: OperationDeps,
  hub: NotificationHub,
  scope: RunScope,
  signal: AbortSignal,
): AsyncGenerator<RunSnapshot> {
  const wakes = wakeUps(signal);
  // Subscribed before the first read, so nothing committed after that read goes unnoticed.
  const unsubscribe = hub.subscribe('run_events', scope.runId, wakes.wake);
  try {
    do {
      wakes.clear();
      yield await loadSnapshot(deps, scope);
      await wakes.wait();
      // A change announced as the wait ended is read before the watch ends: its last word is fresh.
    } while (!signal.aborted || wakes.woken());
  } finally {
    unsubscribe();
  }
}
