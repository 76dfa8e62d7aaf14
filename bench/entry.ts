import { stopTestStack } from '../testkit/stack';

/** Runs a bench command: exits 0 when it ends, 1 with its error when it fails, the stack stopped. */
export function runEntry(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    async (err) => {
      console.error(err);
      await stopTestStack().catch(() => undefined);
      process.exit(1);
    },
  );
}
