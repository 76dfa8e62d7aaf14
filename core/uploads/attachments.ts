import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Database, Prisma } from '../db/client';
import { attachmentKey } from '../storage/keys';
import type { ObjectStorage } from '../storage/storage';
import type { ReceivedFile } from './receive';

/** An attachment whose bytes are stored and whose row is not written yet. */
export interface PreparedAttachment {
  id: string;
  userId: string;
  storageKey: string;
  filename: string;
  mimeType: string;
  sizeBytes: bigint;
  status: 'ready';
}

export interface AttachmentLinks {
  chatId?: string | null;
  messageId?: string | null;
}

/**
 * Step 1: stores each received file under `attachments/<userId>/<uuid>`. If any put fails, the
 * ones already stored are deleted before the error is rethrown.
 */
export async function putObjects(
  storage: ObjectStorage,
  userId: string,
  files: readonly ReceivedFile[],
): Promise<PreparedAttachment[]> {
  const prepared = files.map((file) => ({
    file,
    row: {
      id: randomUUID(),
      userId,
      storageKey: attachmentKey(userId, randomUUID()),
      filename: file.filename,
      mimeType: file.mimeType,
      sizeBytes: BigInt(file.size),
      status: 'ready' as const,
    },
  }));
  const results = await Promise.allSettled(
    prepared.map(({ file, row }) => {
      const body = createReadStream(file.path);
      // A put that fails before reading its body would otherwise leave the file open.
      return storage
        .put(row.storageKey, body, { contentType: row.mimeType, size: file.size })
        .finally(() => body.destroy());
    }),
  );
  const failure = results.find((r) => r.status === 'rejected');
  if (failure) {
    await discardObjects(
      storage,
      prepared.filter((_, i) => results[i]?.status === 'fulfilled').map((p) => p.row),
    );
    throw failure.reason;
  }
  return prepared.map((p) => p.row);
}

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

/** On failure after step 1: removes the stored objects, so a failed request leaves nothing behind. */
export async function discardObjects(
  storage: ObjectStorage,
  rows: readonly PreparedAttachment[],
): Promise<void> {
  // Best effort: the original error is what the caller reports, not a cleanup hiccup.
  await Promise.allSettled(rows.map((row) => storage.delete(row.storageKey)));
}

/** Steps 1 and 2 for a caller with no transaction of its own (POST /api/v1/uploads). */
export async function storeAttachments(
  deps: { storage: ObjectStorage; db: Database },
  input: { userId: string; files: readonly ReceivedFile[] } & AttachmentLinks,
): Promise<PreparedAttachment[]> {
  const rows = await putObjects(deps.storage, input.userId, input.files);
  try {
    await insertAttachments(deps.db.prisma, rows, input);
  } catch (err) {
    await discardObjects(deps.storage, rows);
    throw err;
  }
  return rows;
}
