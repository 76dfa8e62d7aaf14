// The lifecycle suite (npm run test:lifecycle): `npm start` as a whole process tree, killed,
// stopped and started again. Each test runs its own stack on free ports and a temporary data folder.
module.exports = {
  require: ['tsx/cjs'],
  spec: ['test/lifecycle/**/*.test.ts'],
  timeout: 1_800_000,
  slow: 60_000,
  exit: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': ['suite=lifecycle'],
};
