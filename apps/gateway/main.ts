import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { loadConfigOrExit, operatorHost } from '../../core/config/config';
import { createDatabase } from '../../core/db/client';
import { createLogger } from '../../core/logging/logger';
import { notifyReady, onShutdown } from '../../core/process/ready';
import { createTemporalClient } from '../../core/temporal/connection';
import { createGuardedHttp } from '../../core/net/guarded-http-client';
import { createStorage } from '../../core/storage';
import { startTracing } from '../../core/telemetry/tracing';
import { createApp } from './app';
import { startOperatorPort } from './operator';
import { listen } from './server';
import { startDispatcher, startReconciler } from '../../operations/runs';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
const tracing = startTracing({ serviceName: 'agent-chat-gateway' });
const db = createDatabase({ url: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE });
const temporal = createTemporalClient({
  address: config.TEMPORAL_ADDRESS,
  namespace: config.TEMPORAL_NAMESPACE,
});
const deps = {
  config,
  db,
  temporal,
  logger,
  storage: createStorage(config),
  http: createGuardedHttp(config),
};
const { app, ops } = createApp(deps);
const dispatcher = startDispatcher(deps);
const reconciler = startReconciler(deps);

// One of several gateways on one address (apps/stack/gateways.ts): each binds the port itself with
// SO_REUSEPORT, and the kernel spreads new connections over them.
const listening = listen(app, config, { port: config.PORT, host: config.HOST, shared: cluster.isWorker });
const operator = startOperatorPort(ops, config, { port: config.METRICS_PORT, host: operatorHost(config) });
Promise.all([listening, operator]).then(
  ([, operatorServer]) => {
    logger.info(
      { port: config.PORT, metricsPort: (operatorServer.address() as AddressInfo).port, tracing: !!tracing },
      'gateway listening',
    );
    notifyReady();
  },
  (err: Error) => {
    logger.fatal({ err }, 'gateway could not listen');
    process.exit(1);
  },
);

// No new connections; the requests in flight are answered, for up to SHUTDOWN_GRACE, then cut.
onShutdown(async () => {
  const server = await listening;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // close() ends the connections idle at that moment; a kept-alive one that answers later would
  // otherwise hold the stop until its keep-alive timeout.
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE);
  await closed;
  clearInterval(idle);
  clearTimeout(cut);
  const operatorServer = await operator;
  operatorServer.closeAllConnections();
  operatorServer.close();
  await dispatcher.stop();
  await reconciler.stop();
  await ops.close();
  await temporal.connection.close();
  await db.close();
  await tracing?.shutdown();
});
