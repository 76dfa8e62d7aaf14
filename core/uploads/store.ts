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

/**
 * The name a stored object was uploaded under, when it is an attachment's (a forked chat's
 * attachments share their source's objects, under the same name).
 */
export async function selectAttachmentFilename(
  db: Database,
  storageKey: string,
): Promise<string | undefined> {
  const attachment = await db.prisma.attachment.findFirst({
    where: { storageKey },
    select: { filename: true },
  });
  return attachment?.filename;
}
