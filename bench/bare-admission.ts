/**
 * The least a send can be: one `pg` statement inserting the Chat, Run and Message rows a send
 * writes, then one bare workflow start, on a queue no worker polls. Like the service's sends in the
 * bench (SEND_START_WAIT=off, bench/context.ts), it answers once the rows are committed, the start
 * going on after the answer. A client that admits one after the other waits for the start between
 * two (as a client chaining turns waits for its turn), else starts would pile up without bound.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import type { Bench } from './context';
import type { bareStepsWorkflow } from './workflows';

export interface BareAdmission {
  /** Commits the rows and begins the start; resolves with the start, still going. */
  admit(): Promise<{ started: Promise<unknown> }>;
  /** Waits for every start begun; throws if any failed. */
  settle(): Promise<void>;
}

export function bareAdmission(
  bench: Bench,
  options: {
    /** Left unset, each workflow stays open (the admission rows run last for it); else it times out. */
    workflowTimeout?: Duration;
  } = {},
): BareAdmission {
  const { stack, user } = bench;
  const queue = `bench-bare-idle-${randomBytes(4).toString('hex')}`;
  const starting = new Set<Promise<unknown>>();
  const failures: unknown[] = [];
  return {
    async admit() {
      const chatId = randomUUID();
      const runId = randomUUID();
      const messageId = randomUUID();
      // One statement, as the service admits a turn: a round trip and a commit, no more.
      await stack.db.pool.query(
        `WITH chat AS (
           INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'bench', now())
         ), run AS (
           INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
           VALUES ($3, $1, $2, $4, $5, false, $6, now())
         )
         INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
         VALUES ($4, $1, 'user', $3, $7, now())`,
        [
          chatId,
          user.userId,
          runId,
          messageId,
          randomUUID(),
          randomBytes(16).toString('hex'),
          JSON.stringify([{ type: 'text', text: 'hello bench' }]),
        ],
      );
      const start = bench.temporal.client.workflow
        .start<typeof bareStepsWorkflow>('bareStepsWorkflow', {
          taskQueue: queue,
          workflowId: `bench-${runId}`,
          args: [1],
          ...(options.workflowTimeout ? { workflowExecutionTimeout: options.workflowTimeout } : {}),
        })
        .catch((err: unknown) => void failures.push(err));
      starting.add(start);
      void start.finally(() => starting.delete(start));
      return { started: start };
    },
    async settle() {
      await Promise.all(starting);
      if (failures.length)
        throw new Error(`${failures.length} bare workflow starts failed, first: ${String(failures[0])}`);
    },
  };
}
