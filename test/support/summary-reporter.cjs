// mocha's spec reporter that also appends the run's counts to $TEST_SUMMARY_FILE when it is set
// (.ci/run sets it and sums the lines): `suite<TAB>passed<TAB>failed<TAB>pending`. The suite's name
// is the reporter option `suite`. A failed hook counts as one failure, as mocha counts it.
const { appendFileSync } = require('node:fs');
const Mocha = require('mocha');

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const file = process.env.TEST_SUMMARY_FILE;
    if (!file) return;
    const suite = (options.reporterOptions ?? options.reporterOption ?? {}).suite ?? 'mocha';
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      appendFileSync(file, `${suite}\t${passes}\t${failures}\t${pending}\n`);
    });
  }
}

module.exports = SummaryReporter;
