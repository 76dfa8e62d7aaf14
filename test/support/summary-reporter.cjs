// mocha's spec reporter that also appends the run's counts to $TEST_SUMMARY_FILE when it is set
// (.ci/run sets it and sums the lines): `suite<TAB>passed<TAB>failed<TAB>pending<TAB>not run`. The
// suite's name is the reporter option `suite`. A failed hook counts as one failure, as mocha counts it.
// Tests declared not run (test/support/not-run.ts: left out by the run's settings, never skipped)
// are listed after the run's counts, counted in the last column, and each written to
// $TEST_NOT_RUN_FILE when it is set, for .ci/run to print.
// Each failure's full title and the first line of its error go to $TEST_FAILURES_FILE when it is
// set: CI's output is often read only by its tail, which otherwise names no failed test.
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const file = process.env.TEST_SUMMARY_FILE;
    const failuresFile = process.env.TEST_FAILURES_FILE;
    const suite = (options.reporterOptions ?? options.reporterOption ?? {}).suite ?? 'mocha';
    if (failuresFile) {
      runner.on(Mocha.Runner.constants.EVENT_TEST_FAIL, (test, err) => {
        const message = String((err && err.message) || err)
          .split('\n')[0]
          .slice(0, 300);
        appendFileSync(failuresFile, `${suite}: ${test.fullTitle()}\n    ${message}\n`);
      });
    }
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const notRun = globalThis[Symbol.for('svc.tests.notRun')] ?? [];
      if (notRun.length) {
        Mocha.reporters.Base.consoleLog(`  ${notRun.length} declared, not run:`);
        for (const { name, reason } of notRun) Mocha.reporters.Base.consoleLog(`    - ${name} (${reason})`);
        Mocha.reporters.Base.consoleLog();
      }
      const notRunFile = process.env.TEST_NOT_RUN_FILE;
      if (notRunFile)
        for (const { name, reason } of notRun)
          appendFileSync(notRunFile, `${suite}: ${name}\n    ${reason}\n`);
      if (!file) return;
      const { passes, failures, pending } = this.stats;
      appendFileSync(file, `${suite}\t${passes}\t${failures}\t${pending}\t${notRun.length}\n`);
    });
  }
}

module.exports = SummaryReporter;
