module.exports = {
  require: ['tsx/cjs', 'test/support/hooks.ts'],
  spec: ['test/**/*.test.ts'],
  ignore: ['test/faults/**'],
  timeout: 60_000,
  slow: 2_000,
  exit: true,
  // CI (.ci/run sets CI) fails on a `.only` left behind, and sums every suite's counts.
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': ['suite=unit and integration'],
};
