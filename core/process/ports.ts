import { createServer } from 'node:net';

/**
 * The error code listening on `port` at `host` fails with (EADDRINUSE, EACCES, …); undefined when
 * it is free. A probe, not a reservation: it answers for this moment only.
 */
export function listenError(port: number, host: string): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** The ports freePort has answered in this process, none of which it answers again. */
const handedOut = new Set<number>();

/**
 * A loopback port free at this moment: a probe, not a reservation. Picked below 32768, where the
 * OS never takes a port for an outgoing connection: a server stopped and started again on its
 * port (a killed PostgreSQL, a restarted `npm start`) would otherwise find it taken by some
 * client's socket in between, and a Temporal service's membership port must fit the PostgreSQL
 * smallint the server records it in. Never one this process was handed before, so two settings
 * asked for one after the other (a server's port and its UI's) never meet.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port) || (await listenError(port, '127.0.0.1'))) continue;
    handedOut.add(port);
    return port;
  }
}
