import type { Pool } from 'pg';
import type { HistoryRow, StoredSummary } from '../runs/store';
import { MODEL_READS } from '../runs/queue';

/**
 * A long chat's summary (compaction, core/model/context.ts): the messages it is to take in next,
 * and the summary once the model has written it.
 */

/**
 * The chat's messages after `after` (the summary's last, or the chat's start when null) and
 * before `before` (exclusive), oldest first, `limit` at most, without the answers a later answer
 * replaced and the turns still queued (as the step's history read): the next stretch a compaction takes in, read forward
 * through the index on (chatId, createdAt, id).
 */
export async function selectMessagesToSummarise(
  pool: Pool,
  input: {
    chatId: string;
    after: { createdAt: string; id: string } | null;
    before: { createdAt: string; id: string };
    limit: number;
  },
): Promise<HistoryRow[]> {
  const { rows } = await pool.query<HistoryRow>({
    name: 'chat-summary-next-messages',
    text: `SELECT m.id, m."createdAt", m.role, m."contentBlocks" FROM "Message" m
            WHERE m."chatId" = $1
              AND (m."createdAt", m.id) > (COALESCE($2::timestamptz, '-infinity'),
                                           COALESCE($3::uuid, '00000000-0000-0000-0000-000000000000'))
              AND (m."createdAt", m.id) < ($4::timestamptz, $5::uuid)
              AND ${MODEL_READS('m')}
            ORDER BY m."createdAt", m.id
            LIMIT $6`,
    values: [
      input.chatId,
      input.after?.createdAt ?? null,
      input.after?.id ?? null,
      input.before.createdAt,
      input.before.id,
      input.limit,
    ],
  });
  return rows.map((r) => ({ ...r, createdAt: new Date(r.createdAt).toISOString() }));
}

/**
 * Stores the chat's summary, now through `through`, unless one through a later message is already
 * there (a retried step's compaction that another attempt finished): summaries only move forward.
 */
export async function saveChatSummary(
  pool: Pool,
  input: { chatId: string; summary: string; through: { createdAt: string; id: string }; messages: number },
): Promise<StoredSummary> {
  const { rows } = await pool.query<StoredSummary>({
    name: 'chat-summary-save',
    text: `WITH saved AS (
             INSERT INTO "ChatSummary" ("chatId", summary, "throughCreatedAt", "throughMessageId", messages, "updatedAt")
             VALUES ($1, $2, $3, $4, $5, now())
             ON CONFLICT ("chatId") DO UPDATE
                SET summary = EXCLUDED.summary, "throughCreatedAt" = EXCLUDED."throughCreatedAt",
                    "throughMessageId" = EXCLUDED."throughMessageId", messages = EXCLUDED.messages,
                    "updatedAt" = now()
              WHERE ("ChatSummary"."throughCreatedAt", "ChatSummary"."throughMessageId")
                    < (EXCLUDED."throughCreatedAt", EXCLUDED."throughMessageId")
             RETURNING summary, "throughCreatedAt", "throughMessageId", messages)
           SELECT * FROM saved
           UNION ALL
           SELECT summary, "throughCreatedAt", "throughMessageId", messages FROM "ChatSummary"
            WHERE "chatId" = $1 AND NOT EXISTS (SELECT 1 FROM saved)`,
    values: [input.chatId, input.summary, input.through.createdAt, input.through.id, input.messages],
  });
  const row = rows[0] as StoredSummary;
  return { ...row, throughCreatedAt: new Date(row.throughCreatedAt).toISOString() };
}
