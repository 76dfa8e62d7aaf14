import { stopTestStack } from '../../testkit/stack';

const finalChecks: { name: string; check: () => Promise<void> }[] = [];

/**
 * Runs `check` once every test has run, before the stack stops: for what must hold of everything
 * the whole suite wrote (a failure fails the run, named after the check).
 */
export function atSuiteEnd(name: string, check: () => Promise<void>): void {
  finalChecks.push({ name, check });
}

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    try {
      for (const { name, check } of finalChecks) {
        await check().catch((err: Error) => {
          throw new Error(`${name} (checked after the whole suite): ${err.message}`);
        });
      }
    } finally {
      await stopTestStack();
    }
  },
};
