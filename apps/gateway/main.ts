import { loadConfigOrExit } from '../../core/config/config';
import { createDatabase } from '../../core/db/client';
import { createLogger } from '../../core/logging/logger';
import { notifyReady, onShutdown } from '../../core/process/ready';
import { createTemporalClient } from '../../core/temporal/connection';
import { createGuardedHttp } from '../../core/net/guarded-http-client';
import { createStorage } from '../../core/storage';
import { createApp } from './app';
import { listen } from './server';
import { startDispatcher, startReconciler } from '../../operations/runs';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'gateway' });
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
const { app } = createApp(deps);
const dispatcher = startDispatcher(deps);
const reconciler = startReconciler(deps);

const listening = listen(app, config, { port: config.PORT, host: config.HOST });
listening.then(
  () => {
    logger.info({ port: config.PORT }, 'gateway listening');
    notifyReady();
  },
  (err: Error) => {
    logger.fatal({ err }, 'gateway could not listen');
    process.exit(1);
  },
);

onShutdown(async () => {
  const server = await listening;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dispatcher.stop();
  await reconciler.stop();
  await temporal.connection.close();
  await db.close();
});
