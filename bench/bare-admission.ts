/**
 * The least a send can be: one `pg` statement checking the API key (bare-key.ts) and inserting the
 * Chat, Run and Message rows a send writes, then one bare workflow start, on a queue no worker polls. Like the service's sends in the
 * bench (SEND_START_WAIT=off, bench/context.ts), it answers once the rows are committed, the start
 * going on after the answer. A client that admits one after the other waits for the start between
 * two (as a client chaining turns waits for its turn), else starts would pile up without bound.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duration } from '@temporalio/common';
import { KEY_IS_LIVE, keyHashOf } from './bare-key';
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
      // One statement, as the service admits a turn: the key checked and the rows written, in a
      // round trip and a commit; nothing written for a key that is not live.
      const { rowCount } = await stack.db.pool.query(
        `WITH k AS (
           SELECT k."userId" FROM "ApiKey" k WHERE ${KEY_IS_LIVE('$2')}
         ), chat AS (
           INSERT INTO "Chat" (id, "userId", title, "updatedAt") SELECT $1, k."userId", 'bench', now() FROM k
           RETURNING id, "userId"
         ), run AS (
           INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
           SELECT $3, chat.id, chat."userId", $4, $5, false, $6, now() FROM chat
           RETURNING id
         )
         INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
         SELECT $4, $1, 'user', run.id, $7, now() FROM run`,
        [
          chatId,
          keyHashOf(user.apiKey),
          runId,
          messageId,
          randomUUID(),
          randomBytes(16).toString('hex'),
          JSON.stringify([{ type: 'text', text: 'hello bench' }]),
        ],
      );
      if (rowCount !== 1) throw new Error('bare admission: the key is unknown or revoked');
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
