import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { describeExit } from './process/child';

/**
 * Several gateways (apps/gateway/main.ts) serving one address, PORT: each binds it with
 * SO_REUSEPORT and the kernel spreads new connections over their sockets (by a hash of each
 * connection's addresses), so a client sees one service. Node's cluster module only forks and
 * watches them. Its round-robin mode, where this process accepts each connection and hands it on,
 * is not used: a connection handed to a gateway that dies before taking it stays open here,
 * unanswered, until the client gives up (undici's fetch: 5 minutes); a gateway's own socket is
 * closed with it, and the kernel resets what waited in its queue, so a client retries at once.
 * `npm run start:cluster` runs it as one child (its own process group, stopped by SIGTERM like any
 * gateway); a gateway that dies is started again, as an orchestrator would, while the others go on
 * answering.
 *
 * Settings, from the environment: GATEWAY_PROCESSES (how many), GATEWAY_METRICS_PORTS (one
 * operator port per gateway, comma separated; a shared port could not tell the gateways apart).
 */
const count = Number(process.env.GATEWAY_PROCESSES ?? '2');
const metricsPorts = (process.env.GATEWAY_METRICS_PORTS ?? '').split(',').filter(Boolean);
const say = (line: string) => process.stdout.write(`[gateways] ${line}\n`);

cluster.setupPrimary({
  exec: path.join(__dirname, '../gateway/main.ts'),
  execArgv: ['--import', 'tsx'],
});

let stopping = false;
let announced = false;
const ready = new Set<number>();

function start(index: number): void {
  const metricsPort = metricsPorts[index] ?? metricsPorts[0] ?? process.env.METRICS_PORT ?? '9464';
  const gateway = cluster.fork({ METRICS_PORT: metricsPort });
  gateway.on('message', (message: unknown) => {
    if (message !== 'ready') return;
    ready.add(index);
    say(`gateway ${index + 1} ready (pid ${gateway.process.pid}, metrics on port ${metricsPort})`);
    if (!announced && ready.size === count) {
      announced = true;
      process.send?.('ready');
    }
  });
  gateway.on('exit', (code, signal) => {
    ready.delete(index);
    if (stopping) return;
    say(
      `gateway ${index + 1} (pid ${gateway.process.pid}) exited (${describeExit({ code, signal: signal as NodeJS.Signals | null })}); starting it again`,
    );
    start(index);
  });
}

for (let i = 0; i < count; i++) start(i);

function stop(): void {
  if (stopping) return;
  stopping = true;
  const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
  // Each gateway stops as it does alone: no new requests, those in flight answered.
  for (const gateway of alive) gateway.process.kill('SIGTERM');
  void Promise.all(alive.map((g) => new Promise((resolve) => g.once('exit', resolve)))).then(() =>
    process.exit(0),
  );
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
// The supervisor went away without stopping us (its IPC channel closed).
if (process.send) process.once('disconnect', stop);
