/**
 * The admission rows: `POST /api/v1/completions` → 202 on a queue no worker polls, against one
 * `pg` statement checking the same API key and inserting the same Chat, Run and Message rows, then
 * one bare workflow start.
 * Both answer once the rows are committed, their start going on after the answer (the bench's
 * gateways run with SEND_START_WAIT=off; bare-admission.ts). Every admission leaves its workflow
 * open, which weighs on the server: these rows run last.
 */
import { randomBytes } from 'node:crypto';
import { startGateway } from '../testkit/gateway';
import { bareAdmission } from './bare-admission';
import type { Bench } from './context';
import { serviceClient } from './client';
import { measure, measurePair, repeat } from './measure';
import { latencyRow, type Row } from './report';

const BOUND = { p50: 1.2, p99: 1.5 };

export async function admissionRows(
  bench: Bench,
  samples: { seq: number; conc: number; rounds: number },
): Promise<Row[]> {
  const { stack, user } = bench;
  const idleQueue = `bench-idle-${randomBytes(4).toString('hex')}`;
  const gateway = await startGateway({
    config: stack.config({ ...bench.env, TEMPORAL_TASK_QUEUE: idleQueue }),
  });
  const client = serviceClient(gateway.url, user);
  const send = () => client.send({ text: 'hello bench' });
  const bare = bareAdmission(bench);
  const bareAdmit = () => bare.admit();

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
      console.log(`bench: ${name}, ${n} at ${concurrency} in flight, ${samples.rounds} rounds…`);
      const rounds = await repeat(samples.rounds, () => measurePair(send, bareAdmit, n, concurrency));
      rows.push(latencyRow('admission', name, rounds, BOUND));
    }
    await bare.settle();
    return rows;
  } finally {
    await gateway.close();
  }
}
