import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { insertUnderCap } from '../db/caps';

/**
 * The streams feature's SQL: the slots of the users' open streams and waits ("StreamSlot",
 * migration stream_slots), each good until its `expiresAt`, which its gateway extends.
 */

/**
 * A new slot of the user's, good for `ttlSeconds`, unless they hold `max` live ones already
 * (undefined then, and nothing is written). The user's expired slots (a dead gateway's) go first.
 */
export function takeStreamSlot(
  pool: Pool,
  input: { userId: string; ttlSeconds: number; max: number },
): Promise<string | undefined> {
  return insertUnderCap(
    pool,
    {
      userId: input.userId,
      countSql: `SELECT count(*) FROM "StreamSlot" WHERE "userId" = $1 AND "expiresAt" > now()`,
      max: input.max,
    },
    async (client) => {
      const id = randomUUID();
      await client.query(`DELETE FROM "StreamSlot" WHERE "userId" = $1 AND "expiresAt" <= now()`, [
        input.userId,
      ]);
      await client.query(
        `INSERT INTO "StreamSlot" (id, "userId", "expiresAt") VALUES ($1, $2, now() + make_interval(secs => $3))`,
        [id, input.userId, input.ttlSeconds],
      );
      return id;
    },
  );
}

/** Keeps the slots a gateway holds good for `ttlSeconds` more: one statement for all of them. */
export async function extendStreamSlots(
  pool: Pool,
  ids: readonly string[],
  ttlSeconds: number,
): Promise<void> {
  await pool.query(
    `UPDATE "StreamSlot" SET "expiresAt" = now() + make_interval(secs => $2) WHERE id = ANY($1::uuid[])`,
    [ids, ttlSeconds],
  );
}

export async function releaseStreamSlot(pool: Pool, id: string): Promise<void> {
  await pool.query(`DELETE FROM "StreamSlot" WHERE id = $1`, [id]);
}
