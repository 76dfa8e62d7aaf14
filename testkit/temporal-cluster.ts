import type { EmbeddedPostgresHandle } from '../apps/stack/embedded/postgres';
import {
  installTemporalSchemas,
  registerNamespace,
  resolveClusterTool,
  startTemporalService,
  temporalServerEnv,
  TEMPORAL_SERVICES,
  waitForFrontend,
  type TemporalService,
} from '../apps/stack/embedded/temporal-cluster';
import type { Child } from '../apps/stack/process/child';
import { freePort } from '../core/process/ports';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

/**
 * The production topology's Temporal for a test or the bench: the server's four services as
 * processes of their own (children of the caller, so its CPU figures count them) on `postgres`,
 * configured by deploy/temporal, as `npm run start:cluster` runs them. Each service can be
 * stopped or killed alone and started again on its own ports.
 */
export interface TestCluster {
  address: string;
  /** Starts `service` (every service not running when none is named, in start order). */
  start(service?: TemporalService): Promise<void>;
  /** Stops `service` (all of them when none is named, in reverse order) with `signal`. */
  stop(signal: NodeJS.Signals, service?: TemporalService): Promise<void>;
}

/** Installs the schema, starts every service and registers the default namespace. */
export async function startTestCluster(
  postgres: EmbeddedPostgresHandle,
  options: { nice?: number } = {},
): Promise<TestCluster> {
  const adminUrl = postgres.url('postgres');
  const binary = await resolveClusterTool('server', { find: true });
  await installTemporalSchemas(await resolveClusterTool('sql-tool', { find: true }), adminUrl);
  const ports = {
    frontend: await freePort(),
    frontendHttp: await freePort(),
    history: await freePort(),
    matching: await freePort(),
    worker: await freePort(),
    membership: {
      frontend: await freePort(),
      history: await freePort(),
      matching: await freePort(),
      worker: await freePort(),
    },
    ui: 0,
  };
  const env = temporalServerEnv(adminUrl, ports);
  const address = `127.0.0.1:${ports.frontend}`;
  const services = new Map<TemporalService, Child>();
  const cluster: TestCluster = {
    address,
    async start(only) {
      for (const name of TEMPORAL_SERVICES) {
        if ((only && only !== name) || services.get(name)?.running()) continue;
        const service = startTemporalService(binary, name, env, { nice: options.nice });
        services.set(name, service);
        if (name === 'frontend') await waitForFrontend(address, service);
      }
    },
    async stop(signal, only) {
      for (const name of [...TEMPORAL_SERVICES].reverse()) {
        if (only && only !== name) continue;
        await services.get(name)?.stop(signal, 10_000);
        services.delete(name);
      }
    },
  };
  try {
    await cluster.start();
    await registerNamespace(address, 'default', SEARCH_ATTRIBUTES);
    return cluster;
  } catch (err) {
    await cluster.stop('SIGTERM');
    throw err;
  }
}
