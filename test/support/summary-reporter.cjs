// mocha's spec reporter that also appends the run's counts to $TEST_SUMMARY_FILE when it is set
// (.ci/run sets it and sums the lines): `suite<TAB>passed<TAB>failed<TAB>pending`. The suite's name
// is the reporter option `suite`. A failed hook counts as one failure, as mocha counts it.
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
    if (!file) return;
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      appendFileSync(file, `${suite}\t${passes}\t${failures}\t${pending}\n`);
    });
  }
}

module.exports = SummaryReporter;
