// The fault suite (npm run test:faults): real gateway and worker processes, killed and restarted.
module.exports = {
  require: ['tsx/cjs'],
  spec: ['test/faults/**/*.test.ts'],
  timeout: 600_000,
  slow: 30_000,
  exit: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': ['suite=faults'],
};
