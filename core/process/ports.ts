import { createServer, type AddressInfo } from 'node:net';
import { describeProcess, listenerOf } from './procfs';

/**
 * Why `port` cannot be listened on at `host`, naming the process that holds it; undefined when it
 * is free. A probe, not a reservation: it answers for this moment only.
 */
export async function portProblem(port: number, host: string): Promise<string | undefined> {
  const code = await new Promise<string | undefined>((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (code === undefined) return undefined;
  if (code !== 'EADDRINUSE') return `port ${port} on ${host} cannot be listened on (${code})`;
  const holder = await listenerOf(port);
  return `port ${port} is in use by ${holder ? describeProcess(holder) : 'a process of another user'}`;
}

/** The ports freePort has answered in this process, none of which it answers again. */
const handedOut = new Set<number>();

/**
 * A loopback port free at this moment (the OS's pick): a probe, not a reservation. Never one this
 * process was handed before: the OS may pick a port again as soon as the probe lets it go, and two
 * settings asked for one after the other (a server's port and its UI's) must not meet.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port: picked } = server.address() as AddressInfo;
        server.close(() => resolve(picked));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/**
 * A loopback port below 32768 free at this moment: the OS picks its free ports above that, and a
 * Temporal service's membership port must fit the PostgreSQL smallint the server records it in.
 */
export async function freeLowPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!(await portProblem(port, '127.0.0.1'))) return port;
  }
}
