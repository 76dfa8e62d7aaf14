import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp, type GatewayApp } from '../apps/gateway/app';
import { listen } from '../apps/gateway/server';
import type { GatewayDeps } from '../apps/gateway/deps';
import type { Config } from '../core/config/config';
import { createLogger } from '../core/logging/logger';
import { createGuardedHttp } from '../core/net/guarded-http-client';
import { createStorage } from '../core/storage';
import { createTemporalClient } from '../core/temporal/connection';
import { testStack } from './stack';

export interface TestGateway extends GatewayApp {
  url: string;
  deps: GatewayDeps;
  close(): Promise<void>;
}

/** The real gateway app on an ephemeral port, over the shared test stack. */
export async function startGateway(
  options: { config?: Config; temporalAddress?: string; deps?: Partial<GatewayDeps>; port?: number } = {},
): Promise<TestGateway> {
  const stack = await testStack();
  const config = options.config ?? stack.config();
  const temporal = createTemporalClient({
    address: options.temporalAddress ?? stack.temporalAddress,
    namespace: config.TEMPORAL_NAMESPACE,
  });
  const deps: GatewayDeps = {
    config,
    db: stack.db,
    temporal,
    logger: createLogger({ level: config.LOG_LEVEL, name: 'gateway-test' }),
    storage: createStorage(config),
    http: createGuardedHttp(config),
    ...options.deps,
  };
  const gateway = createApp(deps);
  const server: Server = await listen(gateway.app, config, { port: options.port ?? 0, host: '127.0.0.1' });
  const { port } = server.address() as AddressInfo;
  return {
    ...gateway,
    deps,
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.ops.close();
      await temporal.connection.close();
    },
  };
}
