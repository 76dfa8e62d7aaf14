import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Config } from '../config/config';
import type { Database } from '../db/client';
import { attachmentKey } from '../storage/keys';
import type { ObjectStorage } from '../storage/storage';
import { releaseStorage, reserveStorage } from '../storage/store';
import type { ReceivedFile } from './receive';
import { insertAttachments } from './store';

/** What storing a user's files needs: the storage, and the database their quota is kept in. */
export interface StoreDeps {
  storage: ObjectStorage;
  db: Database;
  config: Pick<Config, 'MAX_STORED_BYTES_PER_USER'>;
}

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
 * Step 1: stores each received file under `attachments/<userId>/<uuid>`, once the user's storage
 * quota has room for them all (422 LIMIT_REACHED otherwise, and nothing is stored). If any put
 * fails, the ones already stored are deleted, and their room given back, before the error is
 * rethrown.
 */
export async function putObjects(
  deps: StoreDeps,
  userId: string,
  files: readonly ReceivedFile[],
): Promise<PreparedAttachment[]> {
  const { storage } = deps;
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
  await reserveStorage(deps.db.pool, {
    userId,
    files: prepared.map((p) => p.row),
    maxBytes: deps.config.MAX_STORED_BYTES_PER_USER,
  });
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
      deps,
      prepared.map((p) => p.row),
    );
    throw failure.reason;
  }
  return prepared.map((p) => p.row);
}

/**
 * On failure after step 1: removes the stored objects and gives their room in the quota back, so a
 * failed request leaves nothing behind.
 */
export async function discardObjects(deps: StoreDeps, rows: readonly PreparedAttachment[]): Promise<void> {
  // Best effort: the original error is what the caller reports, not a cleanup hiccup.
  await Promise.allSettled([
    ...rows.map((row) => deps.storage.delete(row.storageKey)),
    releaseStorage(
      deps.db.pool,
      rows.map((row) => row.storageKey),
    ),
  ]);
}

/** Steps 1 and 2 for a caller with no transaction of its own (POST /api/v1/uploads). */
export async function storeAttachments(
  deps: StoreDeps,
  input: { userId: string; files: readonly ReceivedFile[] } & AttachmentLinks,
): Promise<PreparedAttachment[]> {
  const rows = await putObjects(deps, input.userId, input.files);
  try {
    await insertAttachments(deps.db.prisma, rows, input);
  } catch (err) {
    await discardObjects(deps, rows);
    throw err;
  }
  return rows;
}
