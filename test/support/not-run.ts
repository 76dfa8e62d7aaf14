/**
 * Tests a run leaves out on purpose (a scenario its settings did not pick) are declared, not
 * skipped: the summary reporter (summary-reporter.cjs) lists each, counts them in the suite's
 * summary line, and .ci/run prints them, so a subset never passes for the whole. The list lives
 * under a global symbol the reporter reads, as the reporter is loaded apart from the test files.
 */
const NOT_RUN = Symbol.for('svc.tests.notRun');

export interface NotRun {
  name: string;
  reason: string;
}

export function declareNotRun(name: string, reason: string): void {
  const registry = globalThis as { [NOT_RUN]?: NotRun[] };
  (registry[NOT_RUN] ??= []).push({ name, reason });
}
