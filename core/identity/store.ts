import { randomUUID } from 'node:crypto';
import { insertUnderCap } from '../db/caps';
import type { Database } from '../db/client';
import { CUTOFF } from '../db/retention';
import { decodeCursor } from '../schemas/common';

/**
 * The identity feature's SQL: users, sessions and API keys. Prisma serves the plain CRUD of keys
 * and users; hand-written SQL serves what runs on every request (the key check, the session
 * check) and what must be one statement (a sign-up racing another).
 */

export interface UserRow {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
  creditBalance: string;
}

const USER_COLUMNS = 'id, email, "passwordHash", "createdAt", "creditBalance"::text AS "creditBalance"';

/**
 * Undefined when the email is taken: ON CONFLICT, so two racing sign-ups get one account. The
 * account starts with `creditGrant` credits.
 */
export async function insertUser(
  db: Database,
  input: { email: string; passwordHash: string; creditGrant: string },
): Promise<UserRow | undefined> {
  const { rows } = await db.pool.query<UserRow>(
    `INSERT INTO "User" (id, email, "passwordHash", "creditBalance", "updatedAt") VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (email) DO NOTHING RETURNING ${USER_COLUMNS}`,
    [randomUUID(), input.email, input.passwordHash, input.creditGrant],
  );
  return rows[0];
}

export async function selectUserByEmail(db: Database, email: string): Promise<UserRow | undefined> {
  const { rows } = await db.pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM "User" WHERE email = $1`, [
    email,
  ]);
  return rows[0];
}

export function selectUser(db: Database, userId: string) {
  return db.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { id: true, email: true, createdAt: true, creditBalance: true },
  });
}

export async function insertSession(db: Database, userId: string, tokenHash: string, maxAgeSeconds: number) {
  await db.pool.query(
    `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt")
     VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [randomUUID(), userId, tokenHash, maxAgeSeconds],
  );
}

export async function deleteSession(db: Database, sessionId: string): Promise<void> {
  await db.pool.query('DELETE FROM "Session" WHERE id = $1', [sessionId]);
}

export async function deleteSessionsOfUser(db: Database, userId: string): Promise<void> {
  await db.pool.query('DELETE FROM "Session" WHERE "userId" = $1', [userId]);
}

/**
 * How much longer the session works, in ms, while it works; undefined once it has ended or
 * expired. A duration by the database's clock, so a caller's own clock need not agree with it.
 */
export async function sessionRemainingMs(db: Database, sessionId: string): Promise<number | undefined> {
  const { rows } = await db.pool.query<{ remainingMs: number }>({
    name: 'session-remaining',
    text: `SELECT (extract(epoch FROM "expiresAt" - now()) * 1000)::float8 AS "remainingMs"
             FROM "Session" WHERE id = $1 AND "expiresAt" > now()`,
    values: [sessionId],
  });
  return rows[0]?.remainingMs;
}

/** The live session a cookie's token names, if any. */
export async function selectSession(
  db: Database,
  tokenHash: string,
): Promise<{ id: string; userId: string } | undefined> {
  const { rows } = await db.pool.query<{ id: string; userId: string }>(
    'SELECT id, "userId" FROM "Session" WHERE "tokenHash" = $1 AND "expiresAt" > now()',
    [tokenHash],
  );
  return rows[0];
}

export interface KeyCheck {
  id: string;
  userId: string;
  counters: { name: string; points: number; expire: string }[];
}

/** How stale `lastUsedAt` may be: one write per key per interval, not one per request. */
const LAST_USED_WRITE_INTERVAL_SECONDS = 60;

/**
 * The key check of every public call, its rate-limit counters and the throttled `lastUsedAt`
 * write, as one statement, so authentication costs one round trip. The counters keep
 * rate-limiter-flexible's fixed-window layout ("RateLimit": key, points, expire in epoch ms), so
 * every gateway process shares them, and a refused key counts nothing. Each counter takes its
 * `points` (the call's own, and any it leases for later calls: operations/key-memory.ts).
 */
export async function checkApiKey(
  db: Database,
  input: { keyHash: string; counters: { name: string; points: number }[]; now: number },
): Promise<KeyCheck | undefined> {
  // Named, so each pooled connection parses and plans it once; on the bookkeeping pool, since the
  // counters and lastUsedAt it writes need no flush to disk before the request goes on.
  const { rows } = await db.bookkeeping.query<KeyCheck>({
    name: 'api-key-check',
    text: `WITH k AS (
       SELECT id, "userId" FROM "ApiKey" WHERE "keyHash" = $1 AND "revokedAt" IS NULL
     ), used AS (
       UPDATE "ApiKey" a SET "lastUsedAt" = now() FROM k
        WHERE a.id = k.id AND (a."lastUsedAt" IS NULL OR a."lastUsedAt" < now() - make_interval(secs => $4))
     ), counted AS (
       INSERT INTO "RateLimit" AS r (key, points, expire)
       SELECT n.name || ':' || k.id, n.points, $3::bigint + 60000
         FROM k CROSS JOIN unnest($2::text[], $5::int[]) AS n(name, points)
       ON CONFLICT (key) DO UPDATE SET
         points = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN excluded.points ELSE r.points + excluded.points END,
         expire = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN excluded.expire ELSE r.expire END
       RETURNING split_part(key, ':', 1) AS name, points, expire
     )
     SELECT k.id, k."userId",
            COALESCE((SELECT jsonb_agg(counted) FROM counted), '[]'::jsonb) AS counters
       FROM k`,
    values: [
      input.keyHash,
      input.counters.map((c) => c.name),
      input.now,
      LAST_USED_WRITE_INTERVAL_SECONDS,
      input.counters.map((c) => c.points),
    ],
  });
  return rows[0];
}

export interface ApiKeyRow {
  id: string;
  name: string;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

/** Undefined when the user already holds `max` live keys (nothing is written then). */
export function insertApiKey(
  db: Database,
  input: { userId: string; name: string; prefix: string; keyHash: string },
  max: number,
): Promise<ApiKeyRow | undefined> {
  return insertUnderCap(
    db.pool,
    {
      userId: input.userId,
      countSql: 'SELECT count(*) FROM "ApiKey" WHERE "userId" = $1 AND "revokedAt" IS NULL',
      max,
    },
    async (client) => {
      const { rows } = await client.query<ApiKeyRow>(
        `INSERT INTO "ApiKey" (id, "userId", name, prefix, "keyHash") VALUES ($1, $2, $3, $4, $5)
         RETURNING id, name, prefix, "lastUsedAt", "createdAt"`,
        [randomUUID(), input.userId, input.name, input.prefix, input.keyHash],
      );
      return rows[0] as ApiKeyRow;
    },
  );
}

/** One page (plus one row telling whether another follows) of a user's live keys, newest first. */
export function selectApiKeys(db: Database, userId: string, query: { limit: number; cursor?: string }) {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  return db.prisma.apiKey.findMany({
    where: {
      userId,
      revokedAt: null,
      ...(after
        ? { OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { lt: after.id } }] }
        : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
}

/** Whether the key still works: not revoked, and its user not deleted. */
export async function apiKeyIsLive(db: Database, keyId: string): Promise<boolean> {
  const { rowCount } = await db.pool.query({
    name: 'api-key-live',
    text: `SELECT 1 FROM "ApiKey" WHERE id = $1 AND "revokedAt" IS NULL`,
    values: [keyId],
  });
  return rowCount === 1;
}

/** False when there was no such live key of this user. */
export async function revokeApiKey(db: Database, userId: string, keyId: string): Promise<boolean> {
  const { count } = await db.prisma.apiKey.updateMany({
    where: { id: keyId, userId, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return count > 0;
}

/**
 * Deletes a batch of sessions expired longer than `keptMs` ago, the longest expired first (each
 * deletion is announced on `sessions`, as a sign-out is). Answers how many.
 */
export async function deleteExpiredSessions(db: Database, keptMs: number, batch: number): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM "Session"
      WHERE id = ANY(ARRAY(SELECT id FROM "Session" WHERE "expiresAt" < ${CUTOFF} ORDER BY "expiresAt" LIMIT $2))`,
    [keptMs, batch],
  );
  return rowCount ?? 0;
}
