// The chaos suite (npm run test:chaos): two gateways and two workers under load, with SIGKILLs of
// every process aimed at named moments (mid-activity, mid-POST, mid-transaction, mid-request), at
// the moments the code announces (FAULT_PAUSE_AT) and at random moments; docs/reliability.md.
// CHAOS_RUNS (requests per scenario; CI's default is small, 200 for the documented tables),
// CHAOS_FAULTS (faults per scenario), CHAOS_SEED (replays a run: the suite prints it),
// CHAOS_SCENARIOS (names' prefixes; the others are declared, not run), CHAOS_ENGINE (dev, the
// default: the Temporal dev server; cluster: the production topology's Temporal, its services
// killed one at a time).
// PostgreSQL is SIGKILLed here, so it runs durable (the default): with synchronous_commit off a
// commit is answered before its WAL leaves shared memory, and a kill loses it.

module.exports = {
  require: ['tsx/cjs'],
  spec: ['test/chaos/**/*.test.ts'],
  timeout: 0,
  slow: 60_000,
  exit: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': [`suite=${process.env.CHAOS_ENGINE === 'cluster' ? 'chaos (cluster)' : 'chaos'}`],
};
