// The cluster suite (npm run test:cluster): `npm run start:cluster` started once (hooks.ts); the
// main suite's contract tests (turns, plan approval, tools, webhooks, uploads) run on its Temporal
// cluster, then test/cluster drives its two gateways and kills its processes.
module.exports = {
  require: ['tsx/cjs', 'test/cluster/hooks.ts'],
  spec: [
    'test/runs/agent.test.ts',
    'test/runs/agent-tools.test.ts',
    'test/runs/agent-step.test.ts',
    'test/tools/tools.test.ts',
    'test/webhooks/delivery.test.ts',
    'test/webhooks/endpoints.test.ts',
    'test/gateway/uploads.test.ts',
    'test/gateway/messages.test.ts',
    'test/cluster/**/*.test.ts',
  ],
  timeout: 120_000,
  slow: 10_000,
  exit: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: 'test/support/summary-reporter.cjs',
  'reporter-option': ['suite=cluster'],
};
