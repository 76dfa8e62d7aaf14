import type { GatewayDeps } from '../deps';
import { startRun, type RunToStart } from './start';

const INTERVAL_MS = 2_000;
/** Younger runs are still being started by the request that admitted them. */
const GRACE_SECONDS = 3;
const BATCH = 50;

/**
 * Starts every admitted run whose workflow was not started: Temporal was unreachable at
 * admission, the gateway died between the commit and the start, or the chat's previous workflow
 * was still closing. Several gateways may run it at once: starts are idempotent (see startRun).
 */
export function startDispatcher(deps: GatewayDeps, intervalMs = INTERVAL_MS): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const tick = async () => {
    const { rows } = await deps.db.pool.query<RunToStart>(
      `SELECT id, "chatId", "userId", "messageId", "assistantMessageId", "traceId", "planMode"
         FROM "Run"
        WHERE status = 'QUEUED' AND "triggerRunId" IS NULL
          AND "createdAt" < now() - make_interval(secs => $1)
        ORDER BY "createdAt"
        LIMIT $2`,
      [GRACE_SECONDS, BATCH],
    );
    for (const run of rows) {
      if (stopped) return;
      await startRun(deps, run);
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick()
        .catch((err: Error) => deps.logger.warn({ err: err.message }, 'dispatcher pass failed'))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
