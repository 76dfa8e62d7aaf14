import type { Pool } from 'pg';
import { CUTOFF } from '../db/retention';

/** How long a key and its first answer are kept; after that the key is free again. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/** A stored first answer: the operation's result, or the error it ended with. */
export type StoredOutcome =
  | { ok: true; value: unknown }
  | { ok: false; code: string; message: string; details?: readonly { path: string; message: string }[] };

export interface KeyClaim {
  userId: string;
  key: string;
  operation: string;
  fingerprint: string;
  /** This request's claim: only its owner may record the answer or let the key go. */
  owner: string;
  /** How long the claim holds the key should its process die before answering. */
  leaseMs: number;
}

/** The key as another request left it. */
export interface KeyHolder {
  operation: string;
  fingerprint: string;
  outcome: StoredOutcome | null;
}

/**
 * A claim taken: `since` names this use of the key, kept by a retry that takes over a dead holder's
 * claim; `resumed` says it did (the dead holder may have begun the work).
 */
export interface Claimed {
  since: Date;
  resumed: boolean;
}

/**
 * Claims the key for a request, or answers who holds it. The claim takes a free key, a key whose
 * 24 hours are over (a new use of it), or a key whose holder died before answering (its lease ran
 * out) when the request is the same one (the same use, which keeps its `since`); the primary key
 * makes two gateways racing for a key see one winner.
 */
export async function claimKey(pool: Pool, claim: KeyClaim): Promise<Claimed | KeyHolder | null> {
  // A resumed use is one whose key was held, within its 24 hours, before this statement: read from
  // the statement's own snapshot, not from the timestamps, which two claims within one millisecond
  // would share.
  const { rows } = await pool.query<Claimed>(
    `WITH prior AS (
       SELECT 1 FROM "IdempotencyKey"
        WHERE "userId" = $1 AND key = $2 AND "createdAt" >= now() - $7 * interval '1 hour'
     )
     INSERT INTO "IdempotencyKey" ("userId", key, operation, fingerprint, owner, "lockedUntil")
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond')
     ON CONFLICT ("userId", key) DO UPDATE
       SET operation = EXCLUDED.operation, fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner,
           outcome = NULL, "lockedUntil" = EXCLUDED."lockedUntil",
           "createdAt" = CASE WHEN "IdempotencyKey"."createdAt" < now() - $7 * interval '1 hour'
                              THEN now() ELSE "IdempotencyKey"."createdAt" END
       WHERE "IdempotencyKey"."createdAt" < now() - $7 * interval '1 hour'
          OR ("IdempotencyKey".outcome IS NULL AND "IdempotencyKey"."lockedUntil" < now()
              AND "IdempotencyKey".fingerprint = EXCLUDED.fingerprint)
     RETURNING "createdAt" AS since, EXISTS (SELECT 1 FROM prior) AS resumed`,
    [
      claim.userId,
      claim.key,
      claim.operation,
      claim.fingerprint,
      claim.owner,
      claim.leaseMs,
      IDEMPOTENCY_TTL_HOURS,
    ],
  );
  if (rows[0]) return rows[0];
  return readKey(pool, claim.userId, claim.key);
}

/** The key's holder, or null when the key is free (it expired, or its request let it go). */
export async function readKey(pool: Pool, userId: string, key: string): Promise<KeyHolder | null> {
  const { rows } = await pool.query<KeyHolder>(
    `SELECT operation, fingerprint, outcome FROM "IdempotencyKey"
     WHERE "userId" = $1 AND key = $2 AND "createdAt" >= now() - $3 * interval '1 hour'`,
    [userId, key, IDEMPOTENCY_TTL_HOURS],
  );
  return rows[0] ?? null;
}

/** Records the first answer under the request's own claim. */
export async function storeOutcome(pool: Pool, claim: KeyClaim, outcome: StoredOutcome): Promise<void> {
  await pool.query(
    `UPDATE "IdempotencyKey" SET outcome = $4 WHERE "userId" = $1 AND key = $2 AND owner = $3`,
    [claim.userId, claim.key, claim.owner, JSON.stringify(outcome)],
  );
}

/** Lets the key go without an answer: the request did nothing a retry could repeat. */
export async function releaseKey(pool: Pool, claim: KeyClaim): Promise<void> {
  await pool.query(
    `DELETE FROM "IdempotencyKey" WHERE "userId" = $1 AND key = $2 AND owner = $3 AND outcome IS NULL`,
    [claim.userId, claim.key, claim.owner],
  );
}

/**
 * Deletes a batch of keys past their 24 hours, oldest first; answers how many. A key claimed anew
 * meanwhile (its "createdAt" restarted) is kept.
 */
export async function deleteExpiredKeys(pool: Pool, batch: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM "IdempotencyKey"
      WHERE ctid = ANY(ARRAY(SELECT ctid FROM "IdempotencyKey" WHERE "createdAt" < ${CUTOFF}
                              ORDER BY "createdAt" LIMIT $2))
        AND "createdAt" < ${CUTOFF}`,
    [IDEMPOTENCY_TTL_HOURS * 3_600_000, batch],
  );
  return rowCount ?? 0;
}
