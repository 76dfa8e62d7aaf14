import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from '../../testkit/stack';

/**
 * A TCP proxy on loopback that can be switched off and on: to the gateway, the target behind it
 * (Temporal) stops and starts, without disturbing the other tests that share the target.
 */
export interface TcpProxy {
  address: string;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [
    target.slice(0, target.lastIndexOf(':')),
    Number(target.slice(target.lastIndexOf(':') + 1)),
  ];
  const listenPort = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(port, host === 'localhost' ? '127.0.0.1' : host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
  const down = async () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await up();
  return { address: `127.0.0.1:${listenPort}`, up, down, close: down };
}
