import type { Pool } from 'pg';
import type { NotificationHub } from '../db/notification-hub';
import type { Logger } from '../logging/logger';
import { stopRequested } from './store';

export interface CancelWatch {
  /** Aborted once the run's cancel is recorded or its chat deleted. */
  signal: AbortSignal;
  stop(): void;
}

/**
 * Watches a run for its cancel while a step works on it. The statement that records a cancel
 * notifies `run_cancels` at its commit (migration run_cancel_notify); the watch then reads the run
 * to be sure, as it does whenever the listening connection comes or goes (a notification sent
 * meanwhile is gone), and aborts its signal. Subscribe before reading the run: a cancel committed
 * after that read is heard.
 */
export function watchRunCancel(
  deps: { hub: NotificationHub; pool: Pool; logger: Logger },
  runId: string,
): CancelWatch {
  const controller = new AbortController();
  const check = () => {
    if (controller.signal.aborted) return;
    void stopRequested(deps.pool, runId).then(
      (stop) => {
        if (stop) controller.abort();
      },
      (err: unknown) => deps.logger.warn({ runId, err }, 'could not read whether the run was cancelled'),
    );
  };
  return { signal: controller.signal, stop: deps.hub.subscribe('run_cancels', runId, check) };
}
