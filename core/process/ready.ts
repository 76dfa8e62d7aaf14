import { reasonOf } from './reason';

/** Tells a supervising `npm start` that this process is serving (no-op when run on its own). */
export function notifyReady(): void {
  process.send?.('ready');
}

/**
 * Runs `stop` once on SIGINT or SIGTERM, or when the supervising `npm start` goes away (its IPC
 * channel closes), then exits: 0 when `stop` resolved, 1 when it failed.
 */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`shutdown failed: ${reasonOf(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  if (process.send) process.once('disconnect', handler);
}
