// The fault suite (npm run test:faults): real gateway and worker processes, killed and restarted.
// Tests run the embedded PostgreSQL without fsync (the one switch, see apps/stack/embedded/postgres.ts):
// a test database needs no crash safety, and syncing would slow every test.
process.env.EMBEDDED_POSTGRES_DURABLE ??= 'false';

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
