/**
 * The bare baseline's own process, started by bench/bare.ts: a worker for bench/workflows.ts and,
 * on request, a steady load of bare workflows started and awaited by this same process. Its CPU
 * is the bare stack's share beside the Temporal server's, as the gateway's and the worker's are
 * the service's.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import sharp from 'sharp';
import { closedLoop, type ClosedLoop } from './measure';
import type { BareActivities, bareStepsWorkflow } from './workflows';

const address = process.env.TEMPORAL_ADDRESS as string;
const taskQueue = process.env.BENCH_BARE_QUEUE as string;

const activities: BareActivities = {
  noop: async () => undefined,
  post: async (url, body) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`receiver answered ${res.status}`);
  },
  crop: async (url, rect) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`image server answered ${res.status}`);
    const out = await sharp(Buffer.from(await res.arrayBuffer()))
      .extract(rect)
      .jpeg()
      .toBuffer();
    return out.length;
  },
};

type Request = { id: number } & ({ cmd: 'load'; lanes: number; steps: number } | { cmd: 'mark' | 'stop' });

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  let load: ClosedLoop | undefined;

  process.on('message', (m: Request | string) => {
    if (typeof m !== 'object') return; // 'gc', for gc-hook.cjs
    const answer = async (): Promise<object> => {
      if (m.cmd === 'load') {
        load = closedLoop(m.lanes, () =>
          client.workflow.execute<typeof bareStepsWorkflow>('bareStepsWorkflow', {
            taskQueue,
            workflowId: `bare-${randomUUID()}`,
            args: [m.steps],
          }),
        );
        return {};
      }
      if (!load) throw new Error('no load running');
      if (m.cmd === 'mark') {
        load.mark();
        return {};
      }
      const figures = await load.stop();
      load = undefined;
      return { figures };
    };
    answer().then(
      (body) => process.send?.({ id: m.id, ...body }),
      (err: Error) => process.send?.({ id: m.id, error: err.message }),
    );
  });
  process.once('SIGTERM', () => worker.shutdown());
  process.send?.('ready');
  await running;
  await connection.close();
  await nativeConnection.close();
  // The IPC channel to the bench would keep the process alive.
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bare process failed: ${String(err)}\n`);
  process.exit(1);
});
