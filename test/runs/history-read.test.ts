import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { historySql } from '../../core/runs/store';
import { HISTORY_READ_LIMIT } from '../../core/model/context';
import { fillLongChat } from '../../testkit/long-chat';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';

/**
 * A model step reads its chat's history under the run's lock (issue 50, finding 3): the read must
 * touch the rows it returns and no others, whatever the chat's length, and whatever the planner
 * makes of it. Its estimate of a chat's length is the average chat's: where most chats are short it
 * took a long chat for a short one and read the whole of it through a bitmap (CI's database did, once
 * enough suites had written their short chats). The test turns the walk down the index off for its
 * own transaction, as such a planner would pass it over, and counts what the read touched from
 * PostgreSQL's own counters.
 */
describe('the history a model step reads', function () {
  this.timeout(120_000);

  /** What this transaction has read so far: entries of the history index, rows of "Message" scanned whole. */
  async function counters(client: PoolClient): Promise<{ index: number; sequential: number }> {
    const { rows } = await client.query<{ index: string; sequential: string }>(
      `SELECT pg_stat_get_xact_tuples_returned('"Message_chatId_createdAt_id_idx"'::regclass) AS index,
              (SELECT seq_tup_read FROM pg_stat_xact_user_tables WHERE relname = 'Message') AS sequential`,
    );
    return { index: Number(rows[0]?.index), sequential: Number(rows[0]?.sequential) };
  }

  /**
   * Entries of the history index and rows of "Message" read whole by the gate's read in a chat of
   * `messages`, and the ids it read; `regenerated` of the newest answers have an earlier answer
   * each, which a regenerate replaced.
   */
  async function rowsTouched(
    messages: number,
    regenerated = 0,
  ): Promise<{ index: number; sequential: number; read: string[]; replaced: string[] }> {
    const { db } = await testStack();
    const user = await createTestUser();
    const { chatId } = await fillLongChat(db.pool, { userId: user.userId, messages });
    const { rows: replaced } = await db.pool.query<{ id: string }>(
      `INSERT INTO "Message" (id, "chatId", role, "replyToId", "contentBlocks", "createdAt")
       SELECT gen_random_uuid(), a."chatId", 'assistant', a."replyToId", '[]', a."createdAt" - interval '0.5 seconds'
         FROM (SELECT * FROM "Message" WHERE "chatId" = $1 AND role = 'assistant'
                ORDER BY "createdAt" DESC LIMIT $2) a
       RETURNING id`,
      [chatId, regenerated],
    );
    // The run answers the chat's newest user message.
    const runId = randomUUID();
    await db.pool.query(
      `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "traceId", "updatedAt")
       SELECT $1, $2, $3, m.id, gen_random_uuid(), 'trace', now()
         FROM "Message" m WHERE m."chatId" = $2 AND m.role = 'user'
        ORDER BY m."createdAt" DESC LIMIT 1`,
      [runId, chatId, user.userId],
    );
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      // The planner's choice where it takes a long chat for a short one (its estimate comes from the
      // average chat): anything but the walk down the index.
      await client.query('SET LOCAL enable_indexscan = off');
      const before = await counters(client);
      const { rows } = await client.query<{ history: { id: string }[] }>(
        `WITH cur AS (
           SELECT r.id, r."chatId", u."createdAt" AS "messageAt", r."messageId",
                  COALESCE(s."throughCreatedAt", '-infinity') AS "summaryAt",
                  COALESCE(s."throughMessageId", '00000000-0000-0000-0000-000000000000') AS "summaryId"
             FROM "Run" r JOIN "Message" u ON u.id = r."messageId"
             LEFT JOIN "ChatSummary" s ON s."chatId" = r."chatId"
            WHERE r.id = $1
         )
         SELECT ${historySql('cur', '$2')} AS history FROM cur`,
        [runId, HISTORY_READ_LIMIT],
      );
      const after = await counters(client);
      return {
        index: after.index - before.index,
        sequential: after.sequential - before.sequential,
        read: (rows[0]?.history ?? []).map((m) => m.id),
        replaced: replaced.map((m) => m.id),
      };
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  }

  it('reads the newest messages through the index, as many as it keeps, in a chat of 3,000 as in one of 10', async () => {
    const long = await rowsTouched(3_000);
    const short = await rowsTouched(10);
    assert.equal(
      long.read.length,
      HISTORY_READ_LIMIT + 1,
      'the limit, and one more that says the read stopped short',
    );
    assert.equal(short.read.length, 9, 'the messages up to the run’s');
    assert.equal(long.sequential, 0, 'no sequential scan of the messages');
    assert.equal(short.sequential, 0, 'no sequential scan of the messages');
    assert.ok(long.index <= HISTORY_READ_LIMIT + 2, `read ${long.index} index entries of 3,000 messages`);
    assert.ok(short.index <= 10, `read ${short.index} index entries of 10 messages`);
  });

  it('leaves out the answers a regenerate replaced, still reading through the index only past them', async () => {
    const { index, sequential, read, replaced } = await rowsTouched(3_000, 5);
    assert.equal(replaced.length, 5);
    assert.equal(sequential, 0, 'no sequential scan of the messages');
    assert.equal(read.length, HISTORY_READ_LIMIT + 1);
    assert.deepEqual(
      read.filter((id) => replaced.includes(id)),
      [],
      'no replaced answer is read',
    );
    // The limit and one more, and each replaced answer passed over.
    assert.ok(index <= HISTORY_READ_LIMIT + 2 + 5, `read ${index} index entries of 3,005 messages`);
  });
});
