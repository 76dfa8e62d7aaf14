import { Counter, Registry } from 'prom-client';

/** Every metric of this process; served at /metrics. */
export const metrics = new Registry();

/**
 * Each repair the reconciler makes. A repair of a run means the workflow left its run unfinished:
 * a bug, or an operator's terminate; the count should stay at zero. A delivery started late is
 * what a Temporal outage at the moment of the event leaves behind.
 */
export const reconcilerRepairs = new Counter({
  name: 'agent_reconciler_repairs_total',
  help: 'Repairs made by the reconciler, by kind.',
  labelNames: ['kind'] as const,
  registers: [metrics],
});
