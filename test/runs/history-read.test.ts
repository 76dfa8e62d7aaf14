import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { historySql } from '../../core/runs/store';
import { HISTORY_READ_LIMIT } from '../../core/model/context';
import { fillLongChat } from '../../testkit/long-chat';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * A model step reads its chat's history under the run's lock (issue 50, finding 3): the read must
 * touch the rows it returns and no others, whatever the chat's length.
 */
describe('the history a model step reads', function () {
  this.timeout(120_000);

  /**
   * Rows of "Message" the gate's history read touched in a chat of `messages`, from its plan, and
   * the ids it read; `regenerated` of the newest answers have an earlier answer each, which a
   * regenerate replaced.
   */
  async function rowsTouched(
    messages: number,
    regenerated = 0,
  ): Promise<{ touched: number; sequential: boolean; read: string[]; replaced: string[] }> {
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
    await db.pool.query('ANALYZE "Message"');
    // The gate's row of the run, as gateStep builds it, and its history read.
    const gateRead = `WITH cur AS (
         SELECT r.id, r."chatId", u."createdAt" AS "messageAt", r."messageId",
                COALESCE(s."throughCreatedAt", '-infinity') AS "summaryAt",
                COALESCE(s."throughMessageId", '00000000-0000-0000-0000-000000000000') AS "summaryId"
           FROM "Run" r JOIN "Message" u ON u.id = r."messageId"
           LEFT JOIN "ChatSummary" s ON s."chatId" = r."chatId"
          WHERE r.id = $1
       )
       SELECT ${historySql('cur', '$2')} AS history FROM cur`;
    const { rows: read } = await db.pool.query<{ history: { id: string }[] }>(gateRead, [
      runId,
      HISTORY_READ_LIMIT,
    ]);
    const { rows } = await db.pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${gateRead}`,
      [runId, HISTORY_READ_LIMIT],
    );
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode;
    const scans = nodes(plan).filter(
      (n) => n['Relation Name'] === 'Message' && n['Index Name'] !== 'Message_pkey',
    );
    return {
      touched: scans.reduce(
        (sum, n) => sum + (n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0)) * n['Actual Loops'],
        0,
      ),
      sequential: scans.some((n) => n['Node Type'] === 'Seq Scan'),
      read: (read[0]?.history ?? []).map((m) => m.id),
      replaced: replaced.map((m) => m.id),
    };
  }

  it('reads the newest messages through the index, as many as it keeps, in a chat of 3,000 as in one of 10', async () => {
    const long = await rowsTouched(3_000);
    const short = await rowsTouched(10);
    assert.equal(long.sequential, false, 'no sequential scan of the messages');
    // The limit, and one more that says the read stopped short.
    assert.ok(long.touched <= HISTORY_READ_LIMIT + 1, `read ${long.touched} messages of 3,000`);
    assert.ok(short.touched <= 10, `read ${short.touched} messages of 10`);
  });

  it('leaves out the answers a regenerate replaced, still reading through the index only past them', async () => {
    const { touched, sequential, read, replaced } = await rowsTouched(3_000, 5);
    assert.equal(replaced.length, 5);
    assert.equal(sequential, false, 'no sequential scan of the messages');
    assert.equal(read.length, HISTORY_READ_LIMIT + 1);
    assert.deepEqual(
      read.filter((id) => replaced.includes(id)),
      [],
      'no replaced answer is read',
    );
    // The limit and one more, each replaced answer passed over, and the later answer that replaced it.
    assert.ok(touched <= HISTORY_READ_LIMIT + 1 + 2 * 5, `read ${touched} messages of 3,005`);
  });
});
