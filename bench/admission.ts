/**
 * The admission rows: `POST /api/v1/completions` → 202 on a queue no worker polls, against one
 * `pg` transaction inserting the same Chat, Run and Message rows plus one bare workflow start.
 * Every admission leaves its workflow open, which weighs on the server: these rows run last.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { startGateway } from '../testkit/gateway';
import type { Bench } from './context';
import { serviceClient } from './client';
import { measure, measurePair } from './measure';
import { latencyRow, type Row } from './report';
import type { bareStepsWorkflow } from './workflows';

const BOUND = { p50: 1.2, p99: 1.5 };

export async function admissionRows(bench: Bench, samples: { seq: number; conc: number }): Promise<Row[]> {
  const { stack, user } = bench;
  const idleQueue = `bench-idle-${randomBytes(4).toString('hex')}`;
  const gateway = await startGateway({
    config: stack.config({ ...bench.env, TEMPORAL_TASK_QUEUE: idleQueue }),
  });
  const client = serviceClient(gateway.url, user);
  const send = () => client.send({ text: 'hello bench' });

  const bareQueue = `bench-bare-idle-${randomBytes(4).toString('hex')}`;
  const bareAdmit = async () => {
    const chatId = randomUUID();
    const runId = randomUUID();
    const messageId = randomUUID();
    const db = await stack.db.pool.connect();
    try {
      await db.query('BEGIN');
      await db.query(
        `INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'bench', now())`,
        [chatId, user.userId],
      );
      await db.query(
        `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
         VALUES ($1, $2, $3, $4, $5, false, $6, now())`,
        [runId, chatId, user.userId, messageId, randomUUID(), randomBytes(16).toString('hex')],
      );
      await db.query(
        `INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt") VALUES ($1, $2, 'user', $3, $4, now())`,
        [messageId, chatId, runId, JSON.stringify([{ type: 'text', text: 'hello bench' }])],
      );
      await db.query('COMMIT');
    } catch (err) {
      await db.query('ROLLBACK');
      throw err;
    } finally {
      db.release();
    }
    await bench.temporal.client.workflow.start<typeof bareStepsWorkflow>('bareStepsWorkflow', {
      taskQueue: bareQueue,
      workflowId: `bench-${runId}`,
      args: [1],
    });
  };

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
