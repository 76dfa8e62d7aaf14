/**
 * The least a send can be: one `pg` transaction inserting the Chat, Run and Message rows a send
 * writes, and one bare workflow start, on a queue no worker polls.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import type { Bench } from './context';
import type { bareStepsWorkflow } from './workflows';

export function bareAdmission(
  bench: Bench,
  options: {
    /** Left unset, each workflow stays open (the admission rows run last for it); else it times out. */
    workflowTimeout?: Duration;
  } = {},
): () => Promise<void> {
  const { stack, user } = bench;
  const queue = `bench-bare-idle-${randomBytes(4).toString('hex')}`;
  return async () => {
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
      taskQueue: queue,
      workflowId: `bench-${runId}`,
      args: [1],
      ...(options.workflowTimeout ? { workflowExecutionTimeout: options.workflowTimeout } : {}),
    });
  };
}
