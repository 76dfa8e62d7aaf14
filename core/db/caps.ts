import type { Pool, PoolClient } from 'pg';
import { withTransaction } from './client';

/**
 * Runs `insert` only while the user holds fewer than `max` of the rows `countSql` counts (its `$1`
 * is the user's id), under a lock of the user's row: the count is read after the lock is held, so
 * two racing creations cannot both take the last place. Undefined when the cap is reached, and
 * nothing is written.
 */
export function insertUnderCap<T>(
  pool: Pool,
  input: { userId: string; countSql: string; max: number },
  insert: (client: PoolClient) => Promise<T>,
): Promise<T | undefined> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM "User" WHERE id = $1 FOR NO KEY UPDATE', [input.userId]);
    const { rows } = await client.query<{ n: number }>(`SELECT (${input.countSql})::int AS n`, [
      input.userId,
    ]);
    if ((rows[0]?.n ?? 0) >= input.max) return undefined;
    return insert(client);
  });
}
