import type { Server } from 'node:http';
import type { Config } from '../../core/config/config';
import { metrics } from '../../core/metrics/registry';
import { metricsAnswer, startOperatorServer } from '../../core/metrics/server';
import type { Operations } from '../../operations';

/**
 * The gateway's operator port (METRICS_PORT), apart from the public API: `/metrics` for Prometheus
 * (the task queue's poller gauges refreshed on each scrape) and `/health/details` (readiness and
 * who polls the task queue). Both need `Authorization: Bearer <METRICS_TOKEN>` when it is set.
 */
export function startOperatorPort(
  ops: Operations,
  config: Pick<Config, 'METRICS_TOKEN'>,
  address: { port: number; host: string },
): Promise<Server> {
  return startOperatorServer({
    ...address,
    token: config.METRICS_TOKEN,
    guarded: {
      '/metrics': async () => {
        await ops.health.taskQueue();
        return metricsAnswer(metrics);
      },
      '/health/details': async () => ({ status: 200, body: await ops.health.details() }),
    },
  });
}
