import type { Logger } from '../logging/logger';

/**
 * Runs `pass` again `intervalMs` after each pass ends (never two at once), until stopped; a failed
 * pass is logged and the next one goes ahead. The timer does not keep the process alive.
 */
export function repeatEvery(
  name: string,
  intervalMs: number,
  logger: Logger,
  pass: () => Promise<unknown>,
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass()
        .catch((err: Error) => logger.warn({ err: err.message }, `${name} pass failed`))
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
