import type { PoolClient } from 'pg';
import { CUTOFF } from '../db/retention';

/**
 * Deletes a batch of uploads never attached to a message, stored longer than `retentionMs` ago,
 * oldest first, and answers their storage keys: the caller deletes those files before it commits,
 * so a row goes only with its file (a failed delete rolls the rows back, to be tried again). An
 * upload attached meanwhile is kept.
 */
export async function deleteUnattachedUploads(
  client: PoolClient,
  retentionMs: number,
  batch: number,
): Promise<string[]> {
  const { rows } = await client.query<{ storageKey: string }>(
    `DELETE FROM "Attachment"
      WHERE id = ANY(ARRAY(SELECT id FROM "Attachment" WHERE "messageId" IS NULL AND "createdAt" < ${CUTOFF}
                            ORDER BY "createdAt" LIMIT $2))
        AND "messageId" IS NULL
      RETURNING "storageKey"`,
    [retentionMs, batch],
  );
  return rows.map((r) => r.storageKey);
}
