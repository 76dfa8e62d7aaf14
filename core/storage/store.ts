import type { Pool, PoolClient } from 'pg';
import { AppError } from '../errors/app-error';
import { formatBytes } from '../tools/failures';

/**
 * The storage feature's SQL: what each user holds in object storage ("StoredFile", and its sum on
 * the user's row), which MAX_STORED_BYTES_PER_USER bounds (migration storage_quota).
 */

export interface FileToStore {
  storageKey: string;
  sizeBytes: number | bigint;
}

/**
 * Records `files` as the user's before their bytes are written, if the user's stored bytes stay
 * within `maxBytes`: one statement, whose conditional UPDATE of the user's row PostgreSQL re-checks
 * on its latest version, so racing writes cannot both take the last bytes. A key recorded already
 * (a retried tool attempt writing its output again) counts its new size instead of its old one.
 * Throws 422 LIMIT_REACHED, recording nothing, past the quota.
 */
export async function reserveStorage(
  pool: Pool,
  input: { userId: string; files: readonly FileToStore[]; maxBytes: number },
): Promise<void> {
  if (input.files.length === 0) return;
  const { rows } = await pool.query<{ granted: boolean; used: string }>(
    `WITH files AS (
       SELECT f.key, f.size FROM unnest($2::text[], $3::bigint[]) AS f(key, size)
     ), growth AS (
       SELECT (SELECT sum(size) FROM files)
            - COALESCE((SELECT sum(s."sizeBytes") FROM "StoredFile" s JOIN files ON s."storageKey" = files.key), 0)
              AS bytes
     ), grown AS (
       UPDATE "User" u SET "storedBytes" = u."storedBytes" + growth.bytes FROM growth
        WHERE u.id = $1 AND u."storedBytes" + growth.bytes <= $4
       RETURNING u.id
     ), recorded AS (
       INSERT INTO "StoredFile" ("storageKey", "userId", "sizeBytes")
       SELECT files.key, $1, files.size FROM files, grown
       ON CONFLICT ("storageKey") DO UPDATE SET "sizeBytes" = excluded."sizeBytes"
     )
     SELECT EXISTS (SELECT 1 FROM grown) AS granted,
            (SELECT "storedBytes"::text FROM "User" WHERE id = $1) AS used`,
    [
      input.userId,
      input.files.map((f) => f.storageKey),
      input.files.map((f) => f.sizeBytes.toString()),
      input.maxBytes,
    ],
  );
  if (rows[0]?.granted) return;
  const asked = input.files.reduce((sum, f) => sum + Number(f.sizeBytes), 0);
  throw new AppError(
    'LIMIT_REACHED',
    `Storing ${formatBytes(asked)} more would take your files past ${formatBytes(input.maxBytes)}, ` +
      `the most one account may store (${formatBytes(Number(rows[0]?.used ?? 0))} stored now).`,
    [{ path: 'MAX_STORED_BYTES_PER_USER', message: `at most ${input.maxBytes} bytes stored per user` }],
  );
}

/**
 * Forgets files whose bytes are gone (a refused or failed write, or files retention deleted), and
 * gives their bytes back to their users; inside the caller's transaction when it passes its client.
 */
export async function releaseStorage(pool: Pool | PoolClient, storageKeys: readonly string[]): Promise<void> {
  if (storageKeys.length === 0) return;
  await pool.query(
    `WITH gone AS (
       DELETE FROM "StoredFile" WHERE "storageKey" = ANY($1::text[]) RETURNING "userId", "sizeBytes"
     )
     UPDATE "User" u SET "storedBytes" = GREATEST(u."storedBytes" - g.bytes, 0)
       FROM (SELECT "userId", sum("sizeBytes") AS bytes FROM gone GROUP BY "userId") g
      WHERE u.id = g."userId"`,
    [storageKeys],
  );
}
