/**
 * The admission rows: `POST /api/v1/completions` → 202 on a queue no worker polls, against one
 * `pg` transaction inserting the same Chat, Run and Message rows plus one bare workflow start.
 * Every admission leaves its workflow open, which weighs on the server: these rows run last.
 */
import { randomBytes } from 'node:crypto';
import { startGateway } from '../testkit/gateway';
import { bareAdmission } from './bare-admission';
import type { Bench } from './context';
import { serviceClient } from './client';
import { measure, measurePair } from './measure';
import { latencyRow, type Row } from './report';

const BOUND = { p50: 1.2, p99: 1.5 };

export async function admissionRows(bench: Bench, samples: { seq: number; conc: number }): Promise<Row[]> {
  const { stack, user } = bench;
  const idleQueue = `bench-idle-${randomBytes(4).toString('hex')}`;
  const gateway = await startGateway({
    config: stack.config({ ...bench.env, TEMPORAL_TASK_QUEUE: idleQueue }),
  });
  const client = serviceClient(gateway.url, user);
  const send = () => client.send({ text: 'hello bench' });

  const bareAdmit = bareAdmission(bench);

  try {
    console.log('bench: admission warm-up…');
    await measure(send, 50, 4);
    await measure(bareAdmit, 50, 4);
    const rows: Row[] = [];
    for (const [name, n, concurrency] of [
      ['admission seq', samples.seq, 1],
      ['admission c16', samples.conc, 16],
      ['admission c64', samples.conc, 64],
    ] as const) {
      console.log(`bench: ${name}, ${n} at ${concurrency} in flight…`);
      const { service, baseline } = await measurePair(send, bareAdmit, n, concurrency);
      rows.push(latencyRow('admission', name, service, baseline, BOUND));
    }
    return rows;
  } finally {
    await gateway.close();
  }
}
