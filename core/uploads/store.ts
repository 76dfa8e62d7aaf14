import type { PoolClient } from 'pg';
import { CUTOFF } from '../db/retention';
import type { Database, Prisma } from '../db/client';
import type { AttachmentLinks, PreparedAttachment } from './attachments';

/**
 * Step 2: writes the rows, inside the caller's transaction when it passes one, so attachments
 * appear together with the message (or chat) they belong to, or not at all.
 */
export async function insertAttachments(
  tx: Prisma.TransactionClient,
  rows: readonly PreparedAttachment[],
  links: AttachmentLinks = {},
): Promise<void> {
  await tx.attachment.createMany({
    data: rows.map((row) => ({ ...row, chatId: links.chatId ?? null, messageId: links.messageId ?? null })),
  });
}

/** The name a stored object was uploaded under, when it is an attachment's. */
export async function selectAttachmentFilename(
  db: Database,
  storageKey: string,
): Promise<string | undefined> {
  const attachment = await db.prisma.attachment.findUnique({
    where: { storageKey },
    select: { filename: true },
  });
  return attachment?.filename;
}

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
