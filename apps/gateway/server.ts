import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import type { Config } from '../../core/config/config';

/**
 * The gateway's HTTP server, for main.ts and the tests alike. Slow-loris defence: a client must
 * send its headers within HTTP_HEADERS_TIMEOUT and its whole request within HTTP_REQUEST_TIMEOUT,
 * or the connection is closed; Node checks both on an interval, kept short so the bound holds.
 * `shared`: one of several gateways on the port (SO_REUSEPORT), each with its own socket.
 */
export function listen(
  app: Express,
  config: Pick<Config, 'HTTP_HEADERS_TIMEOUT' | 'HTTP_REQUEST_TIMEOUT'>,
  address: { port: number; host: string; shared?: boolean },
): Promise<Server> {
  const server = createServer(
    {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: Math.min(1_000, config.HTTP_HEADERS_TIMEOUT),
    },
    app,
  );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: address.port, host: address.host, reusePort: address.shared === true }, () =>
      resolve(server),
    );
  });
}
