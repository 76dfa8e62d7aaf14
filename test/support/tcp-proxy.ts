import { createServer, connect, type Server, type Socket } from 'node:net';
import { freePort } from '../../testkit/stack';

/**
 * A TCP proxy on loopback that can be switched off and on, or slowed: to the processes behind it,
 * the target (Temporal, PostgreSQL) stops and starts, or answers late, without disturbing the
 * others that share the target.
 */
export interface TcpProxy {
  address: string;
  down(): Promise<void>;
  up(): Promise<void>;
  /**
   * Holds every chunk, either way, `ms` before passing it on (0: at once again), in order: a
   * network or a server that answers late. Chunks already held keep their time.
   */
  slow(ms: number): void;
  /** How many chunks have been held back by slow() since the proxy started. */
  heldChunks(): number;
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
  let latencyMs = 0;
  let heldChunks = 0;

  /** from → to, each chunk passed on no sooner than latencyMs after it came, and never ahead of one before it. */
  const relay = (from: Socket, to: Socket) => {
    const held: { chunk: Buffer; at: number }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const release = () => {
      timer = undefined;
      while (held.length && (held[0] as { at: number }).at <= Date.now()) {
        if (!to.destroyed) to.write((held.shift() as { chunk: Buffer }).chunk);
        else held.length = 0;
      }
      if (held.length) timer = setTimeout(release, (held[0] as { at: number }).at - Date.now());
    };
    from.on('data', (chunk: Buffer) => {
      if (!latencyMs && !held.length) return void to.write(chunk);
      held.push({ chunk, at: Date.now() + latencyMs });
      heldChunks += 1;
      timer ??= setTimeout(release, latencyMs);
    });
    from.on('close', () => clearTimeout(timer));
  };

  const up = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(port, host === 'localhost' ? '127.0.0.1' : host);
        sockets.add(client).add(upstream);
        relay(client, upstream);
        relay(upstream, client);
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
  return {
    address: `127.0.0.1:${listenPort}`,
    up,
    down,
    slow: (ms) => {
      latencyMs = ms;
    },
    heldChunks: () => heldChunks,
    close: down,
  };
}
