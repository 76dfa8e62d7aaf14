/**
 * The API key check of the bare baselines: where the service checks a key, its baseline checks the
 * same key, the least way there is: its SHA-256 looked up in `ApiKey`, unrevoked, in one statement
 * (alone, or inside the statement that does the baseline's work).
 */
import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

export const keyHashOf = (key: string): string => createHash('sha256').update(key).digest('hex');

/** A statement's rows for the key's owner: `WHERE`-able as `k."keyHash" = $n AND k."revokedAt" IS NULL`. */
export const KEY_IS_LIVE = (param: string, alias = 'k') =>
  `${alias}."keyHash" = ${param} AND ${alias}."revokedAt" IS NULL`;

/** The key's user; throws for an unknown or revoked key, as a route would answer 401. */
export async function checkKey(pool: Pool, key: string): Promise<string> {
  const { rows } = await pool.query<{ userId: string }>(
    `SELECT k."userId" FROM "ApiKey" k WHERE ${KEY_IS_LIVE('$1')}`,
    [keyHashOf(key)],
  );
  const userId = rows[0]?.userId;
  if (!userId) throw new Error('bare key check: the key is unknown or revoked');
  return userId;
}
