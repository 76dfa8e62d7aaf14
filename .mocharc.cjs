// Tests run the embedded PostgreSQL without fsync (the one switch, see apps/stack/embedded/postgres.ts):
// a test database needs no crash safety, and syncing would slow every test.
process.env.EMBEDDED_POSTGRES_DURABLE ??= 'false';

module.exports = {
  require: ['tsx/cjs', 'test/support/hooks.ts'],
  // `npx mocha test/x.test.ts` runs just that file; with no file named, every suite of this config.
  spec: process.argv.slice(2).some((a) => a.endsWith('.test.ts')) ? [] : ['test/**/*.test.ts'],
  ignore: ['test/faults/**', 'test/lifecycle/**', 'test/cluster/**', 'test/chaos/**'],
  timeout: 60_000,
  slow: 2_000,
  exit: true,
  // CI (.ci/run sets CI) fails on a `.only` left behind, and sums every suite's counts.
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': ['suite=unit and integration'],
};
