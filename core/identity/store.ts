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

/** One of a user's per-minute counters after a call took its points (see countedCheck). */
export interface CounterRow {
  name: string;
  points: number;
  expire: string;
}

/** The points a call asks of each of its user's counters (its own, and any it leases). */
export interface CounterAsk {
  name: string;
  points: number;
}

/** A credential a check found, with what the call took of its user's counters. */
export interface CountedCheck {
  id: string;
  userId: string;
  counters: CounterRow[];
}

/**
 * The check of a credential that counts the user's calls, as one statement: `found`, the CTE `s`
 * (one row of the credential's `id` and `"userId"`, or none) and any it needs beside (its own
 * parameters from `$4`), then each counter's points added to that user's counters,
 * `<name>:<user id>` in "RateLimit", in rate-limiter-flexible's fixed-window layout (key, points,
 * expire in epoch ms), so every gateway process shares them; a window that has ended starts anew.
 * Every credential that counts calls (an API key, the console's session, an OAuth token) is
 * checked through it, so every credential of a user counts against the same counters, and a
 * credential not found counts nothing. Named, so each pooled connection parses and plans it
 * once; on the bookkeeping pool, since the counters need no flush to disk before the request
 * goes on.
 */
async function countedCheck(
  db: Database,
  statement: { name: string; found: string; values: unknown[] },
  input: { counters: CounterAsk[]; now: number },
): Promise<CountedCheck | undefined> {
  const { rows } = await db.bookkeeping.query<CountedCheck>({
    name: statement.name,
    text: `WITH ${statement.found}, counted AS (
       INSERT INTO "RateLimit" AS r (key, points, expire)
       SELECT n.name || ':' || s."userId", n.points, $3::bigint + 60000
         FROM s CROSS JOIN unnest($1::text[], $2::int[]) AS n(name, points)
       ON CONFLICT (key) DO UPDATE SET
         points = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN excluded.points ELSE r.points + excluded.points END,
         expire = CASE WHEN r.expire IS NULL OR r.expire <= $3 THEN excluded.expire ELSE r.expire END
       RETURNING split_part(key, ':', 1) AS name, points, expire
     )
     SELECT s.id, s."userId", COALESCE((SELECT jsonb_agg(counted) FROM counted), '[]'::jsonb) AS counters
       FROM s`,
    values: [
      input.counters.map((c) => c.name),
      input.counters.map((c) => c.points),
      input.now,
      ...statement.values,
    ],
  });
  return rows[0];
}

/** The live session a cookie's token names, with the call counted (the console's calls). */
export function checkSession(
  db: Database,
  input: { tokenHash: string; counters: CounterAsk[]; now: number },
): Promise<CountedCheck | undefined> {
  return countedCheck(
    db,
    {
      name: 'session-check',
      found: `s AS (SELECT id, "userId" FROM "Session" WHERE "tokenHash" = $4 AND "expiresAt" > now())`,
      values: [input.tokenHash],
    },
    input,
  );
}

/** Counts a call against the user's `counters`, for a credential checked apart (an OAuth token). */
export async function countUserCalls(
  db: Database,
  input: { userId: string; counters: CounterAsk[]; now: number },
): Promise<CounterRow[]> {
  const counted = await countedCheck(
    db,
    {
      name: 'user-calls-count',
      found: `s AS (SELECT $4::uuid AS id, $4::uuid AS "userId")`,
      values: [input.userId],
    },
    input,
  );
  return counted?.counters ?? [];
}

/** How stale `lastUsedAt` may be: one write per key per interval, not one per request. */
const LAST_USED_WRITE_INTERVAL_SECONDS = 60;

/**
 * The key check of every public call, its user's rate-limit counters (countedCheck) and the
 * throttled `lastUsedAt` write, as one statement, so authentication costs one round trip. Each
 * counter takes its `points` (the call's own, and any it leases for later calls:
 * operations/key-memory.ts).
 */
export function checkApiKey(
  db: Database,
  input: { keyHash: string; counters: CounterAsk[]; now: number },
): Promise<CountedCheck | undefined> {
  return countedCheck(
    db,
    {
      name: 'api-key-check',
      found: `s AS (
         SELECT id, "userId" FROM "ApiKey" WHERE "keyHash" = $4 AND "revokedAt" IS NULL
       ), used AS (
         UPDATE "ApiKey" a SET "lastUsedAt" = now() FROM s
          WHERE a.id = s.id AND (a."lastUsedAt" IS NULL OR a."lastUsedAt" < now() - make_interval(secs => $5))
       )`,
      values: [input.keyHash, LAST_USED_WRITE_INTERVAL_SECONDS],
    },
    input,
  );
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
  input: { userId: string; name: string; prefix: string; keyHash: string; sessionId: string | null },
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
        `INSERT INTO "ApiKey" (id, "userId", name, prefix, "keyHash", "createdBySessionId")
         VALUES ($1, $2, $3, $4, $5, $6)
         RETURNING id, name, prefix, "lastUsedAt", "createdAt"`,
        [randomUUID(), input.userId, input.name, input.prefix, input.keyHash, input.sessionId],
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
/**
 * Revokes every live key of the user not created in `sessionId` (keys older than that record
 * count as another session's); answers how many.
 */
export async function revokeApiKeysOfOtherSessions(
  db: Database,
  userId: string,
  sessionId: string | null,
): Promise<number> {
  const { rowCount } = await db.pool.query(
    `UPDATE "ApiKey" SET "revokedAt" = now()
      WHERE "userId" = $1 AND "revokedAt" IS NULL AND "createdBySessionId" IS DISTINCT FROM $2::uuid`,
    [userId, sessionId],
  );
  return rowCount ?? 0;
}

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
