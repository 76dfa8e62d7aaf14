// Tests run the embedded PostgreSQL without fsync (the one switch, see core/embedded/postgres.ts):
// a test database needs no crash safety, and syncing would slow every test.
process.env.EMBEDDED_POSTGRES_DURABLE ??= 'false';

module.exports = {
  require: ['tsx/cjs', 'test/support/hooks.ts'],
  spec: ['test/**/*.test.ts'],
  ignore: ['test/faults/**', 'test/lifecycle/**'],
  timeout: 60_000,
  slow: 2_000,
  exit: true,
};
