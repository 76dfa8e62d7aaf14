import type { Pool } from 'pg';
import { insertUnderCap } from '../db/caps';
import { decodeCursor } from '../schemas/common';
import { CUTOFF } from '../db/retention';

/**
 * The OAuth feature's SQL: registered clients, one-time codes and grants. Tokens and codes arrive
 * here hashed (see hashToken); nothing readable as a credential is stored.
 */

export async function insertClient(pool: Pool, id: string, metadata: object): Promise<void> {
  await pool.query(`INSERT INTO "OAuthClient" (id, metadata) VALUES ($1, $2)`, [
    id,
    JSON.stringify(metadata),
  ]);
}

export async function selectClient(pool: Pool, id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await pool.query<{ metadata: Record<string, unknown> }>(
    `SELECT metadata FROM "OAuthClient" WHERE id = $1`,
    [id],
  );
  return rows[0]?.metadata;
}

export interface CodeRow {
  clientId: string;
  userId: string;
  codeChallenge: string;
  redirectUri: string;
  resource: string | null;
  scopes: string[];
}

/** A code the user consented to; its client counts as used, so no sweep takes it before the exchange. */
export async function insertCode(
  pool: Pool,
  code: CodeRow & { codeHash: string; ttlSeconds: number },
): Promise<void> {
  await pool.query(
    `WITH touched AS (UPDATE "OAuthClient" SET "lastUsedAt" = now() WHERE id = $2)
     INSERT INTO "OAuthCode" ("codeHash", "clientId", "userId", "codeChallenge", "redirectUri", resource, scopes, "expiresAt")
     VALUES ($1, $2, $3, $4, $5, $6, $8, now() + make_interval(secs => $7))`,
    [
      code.codeHash,
      code.clientId,
      code.userId,
      code.codeChallenge,
      code.redirectUri,
      code.resource,
      code.ttlSeconds,
      code.scopes,
    ],
  );
}

/** A client's code as stored: `grantId` once it was exchanged, `expired` past its lifetime. */
export interface StoredCode extends CodeRow {
  grantId: string | null;
  expired: boolean;
}

export async function selectCode(
  pool: Pool,
  codeHash: string,
  clientId: string,
): Promise<StoredCode | undefined> {
  const { rows } = await pool.query<StoredCode>(
    `SELECT "clientId", "userId", "codeChallenge", "redirectUri", resource, scopes, "grantId",
            "expiresAt" <= now() AS expired
       FROM "OAuthCode" WHERE "codeHash" = $1 AND "clientId" = $2`,
    [codeHash, clientId],
  );
  return rows[0];
}

/** A user's grants that still work: not revoked, and their refresh token not expired. */
const LIVE_GRANTS_OF_USER = `SELECT count(*) FROM "OAuthGrant"
  WHERE "userId" = $1 AND "revokedAt" IS NULL AND "refreshExpiresAt" > now()`;

export async function liveGrantCount(pool: Pool, userId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`SELECT (${LIVE_GRANTS_OF_USER})::int AS n`, [userId]);
  return rows[0]?.n ?? 0;
}

/**
 * Exchanges the code for a grant, in one transaction under the user's lock: the code is marked
 * with the grant (it works once only; see selectCode for a second try), the grant is created while
 * the user holds fewer than `maxGrants` live ones, and the client counts as used. Answers `spent`
 * when the code was exchanged or expired meanwhile, `full` at the cap (nothing written).
 */
export async function exchangeCode(
  pool: Pool,
  grant: {
    codeHash: string;
    clientId: string;
    userId: string;
    grantId: string;
    accessTokenHash: string;
    accessTtlSeconds: number;
    refreshTokenHash: string;
    refreshTtlSeconds: number;
    maxGrants: number;
  },
): Promise<'granted' | 'spent' | 'full'> {
  const outcome = await insertUnderCap(
    pool,
    { userId: grant.userId, countSql: LIVE_GRANTS_OF_USER, max: grant.maxGrants },
    async (client) => {
      const { rowCount } = await client.query(
        `WITH used AS (
           UPDATE "OAuthCode" SET "grantId" = $3
            WHERE "codeHash" = $1 AND "clientId" = $2 AND "grantId" IS NULL AND "expiresAt" > now()
            RETURNING "userId", "clientId", scopes
         ), touched AS (
           UPDATE "OAuthClient" c SET "lastUsedAt" = now() FROM used WHERE c.id = used."clientId"
         )
         INSERT INTO "OAuthGrant" (id, "userId", "clientId", "clientName", "accessTokenHash", "accessExpiresAt",
                                   "refreshTokenHash", "refreshExpiresAt", scopes, "accessScopes")
         SELECT $3, used."userId", used."clientId", COALESCE(c.metadata->>'client_name', used."clientId"),
                $4, now() + make_interval(secs => $5), $6, now() + make_interval(secs => $7), used.scopes, used.scopes
           FROM used JOIN "OAuthClient" c ON c.id = used."clientId"`,
        [
          grant.codeHash,
          grant.clientId,
          grant.grantId,
          grant.accessTokenHash,
          grant.accessTtlSeconds,
          grant.refreshTokenHash,
          grant.refreshTtlSeconds,
        ],
      );
      return rowCount === 1 ? ('granted' as const) : ('spent' as const);
    },
  );
  return outcome ?? 'full';
}

/** What a refresh found: the rotated grant, or why it was refused. */
export type Rotation =
  | { outcome: 'rotated'; id: string; accessScopes: string[] }
  | { outcome: 'scope-too-wide' }
  | { outcome: 'reused' }
  | { outcome: 'invalid' };

/**
 * Rotates a live grant's tokens: the presented refresh token is replaced, and kept as spent, so it
 * works once only. The new access token carries `scopes`, which must be among the grant's (all of
 * them when null). A spent token presented again revokes its grant, every token of it (RFC 9700
 * 4.14.2: one of two parties holding it is not the client). Spent tokens older than the refresh
 * lifetime are let go, as they could no longer be used anyway. The client counts as used (at most
 * once an hour: a write of its row per refresh would buy nothing).
 */
export async function rotateGrant(
  pool: Pool,
  rotation: {
    refreshTokenHash: string;
    clientId: string;
    accessTokenHash: string;
    accessTtlSeconds: number;
    newRefreshTokenHash: string;
    refreshTtlSeconds: number;
    scopes: string[] | null;
  },
): Promise<Rotation> {
  const { rows } = await pool.query<{ id: string; accessScopes: string[] }>(
    `WITH rotated AS (
       UPDATE "OAuthGrant"
          SET "accessTokenHash" = $3, "accessExpiresAt" = now() + make_interval(secs => $4),
              "refreshTokenHash" = $5, "refreshExpiresAt" = now() + make_interval(secs => $6),
              "accessScopes" = COALESCE($7::text[], scopes)
        WHERE "refreshTokenHash" = $1 AND "clientId" = $2 AND "revokedAt" IS NULL AND "refreshExpiresAt" > now()
          AND ($7::text[] IS NULL OR $7::text[] <@ scopes)
        RETURNING id, "accessScopes"
     ), spent AS (
       INSERT INTO "OAuthSpentRefreshToken" ("tokenHash", "grantId") SELECT $1, id FROM rotated
     ), pruned AS (
       DELETE FROM "OAuthSpentRefreshToken" s USING rotated
        WHERE s."grantId" = rotated.id AND s."spentAt" < now() - make_interval(secs => $6)
     ), touched AS (
       UPDATE "OAuthClient" c SET "lastUsedAt" = now() FROM rotated
        WHERE c.id = $2 AND c."lastUsedAt" < now() - interval '1 hour'
     )
     SELECT id, "accessScopes" FROM rotated`,
    [
      rotation.refreshTokenHash,
      rotation.clientId,
      rotation.accessTokenHash,
      rotation.accessTtlSeconds,
      rotation.newRefreshTokenHash,
      rotation.refreshTtlSeconds,
      rotation.scopes,
    ],
  );
  if (rows[0]) return { outcome: 'rotated', ...rows[0] };
  // A statement of its own, so it sees a rotation that committed while the one above waited.
  const { rows: refused } = await pool.query<{ outcome: 'reused' | 'scope-too-wide' }>(
    `WITH reused AS (
       UPDATE "OAuthGrant" g SET "revokedAt" = now()
         FROM "OAuthSpentRefreshToken" s
        WHERE s."tokenHash" = $1 AND g.id = s."grantId" AND g."revokedAt" IS NULL
        RETURNING g.id
     )
     SELECT 'reused' AS outcome FROM reused
     UNION ALL
     SELECT 'scope-too-wide' FROM "OAuthGrant"
      WHERE "refreshTokenHash" = $1 AND "clientId" = $2 AND "revokedAt" IS NULL AND "refreshExpiresAt" > now()
        AND NOT ($3::text[] <@ scopes)`,
    [rotation.refreshTokenHash, rotation.clientId, rotation.scopes ?? []],
  );
  return { outcome: refused[0]?.outcome ?? 'invalid' };
}

export interface LiveGrant {
  id: string;
  userId: string;
  clientId: string;
  accessExpiresAt: Date;
  accessScopes: string[];
}

/** The live grant of an access token, marking it used (at most once a minute). */
export async function checkAccessToken(pool: Pool, accessTokenHash: string): Promise<LiveGrant | undefined> {
  const { rows } = await pool.query<LiveGrant>(
    `UPDATE "OAuthGrant" SET "lastUsedAt" = now()
      WHERE "accessTokenHash" = $1 AND "revokedAt" IS NULL AND "accessExpiresAt" > now()
        AND ("lastUsedAt" IS NULL OR "lastUsedAt" < now() - interval '1 minute')
      RETURNING id, "userId", "clientId", "accessExpiresAt", "accessScopes"`,
    [accessTokenHash],
  );
  if (rows[0]) return rows[0];
  const { rows: fresh } = await pool.query<LiveGrant>(
    `SELECT id, "userId", "clientId", "accessExpiresAt", "accessScopes" FROM "OAuthGrant"
      WHERE "accessTokenHash" = $1 AND "revokedAt" IS NULL AND "accessExpiresAt" > now()`,
    [accessTokenHash],
  );
  return fresh[0];
}

export interface GrantRow {
  id: string;
  clientId: string;
  clientName: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

/** One page (plus one row telling whether another follows) of a user's live grants, newest first. */
export async function selectGrants(
  pool: Pool,
  userId: string,
  query: { limit: number; cursor?: string },
): Promise<GrantRow[]> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows } = await pool.query<GrantRow>(
    `SELECT id, "clientId", "clientName", "lastUsedAt", "createdAt" FROM "OAuthGrant"
      WHERE "userId" = $1 AND "revokedAt" IS NULL AND "refreshExpiresAt" > now()
        AND ($2::timestamptz IS NULL OR ("createdAt", id) < ($2, $3::uuid))
      ORDER BY "createdAt" DESC, id DESC LIMIT $4`,
    [userId, after?.at ?? null, after?.id ?? null, query.limit + 1],
  );
  return rows;
}

/** Revokes by id (the owner, from the list) or by either token's hash (the client, RFC 7009). */
export async function revokeGrant(
  pool: Pool,
  by: { userId: string; id: string } | { clientId: string; tokenHash: string },
): Promise<boolean> {
  const { rowCount } =
    'id' in by
      ? await pool.query(
          `UPDATE "OAuthGrant" SET "revokedAt" = now() WHERE id = $1 AND "userId" = $2 AND "revokedAt" IS NULL`,
          [by.id, by.userId],
        )
      : await pool.query(
          `UPDATE "OAuthGrant" SET "revokedAt" = now()
            WHERE "clientId" = $1 AND ("accessTokenHash" = $2 OR "refreshTokenHash" = $2) AND "revokedAt" IS NULL`,
          [by.clientId, by.tokenHash],
        );
  return (rowCount ?? 0) > 0;
}

/** Every grant of the user ends (sign out everywhere). */
export async function revokeGrantsOfUser(pool: Pool, userId: string): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE "OAuthGrant" SET "revokedAt" = now() WHERE "userId" = $1 AND "revokedAt" IS NULL`,
    [userId],
  );
  return rowCount ?? 0;
}

/** Deletes a batch of codes past their lifetime (a spent one no longer guards its grant then). */
export async function deleteExpiredCodes(pool: Pool, batch: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM "OAuthCode"
      WHERE "codeHash" = ANY(ARRAY(SELECT "codeHash" FROM "OAuthCode" WHERE "expiresAt" < now()
                                    ORDER BY "expiresAt" LIMIT $1))
        AND "expiresAt" < now()`,
    [batch],
  );
  return rowCount ?? 0;
}

/**
 * Deletes a batch of clients unused for `idleMs` that no live grant holds (their codes and ended
 * grants go with them): an assistant that comes back registers again.
 */
export async function deleteIdleClients(pool: Pool, idleMs: number, batch: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM "OAuthClient" c
      WHERE c.id = ANY(ARRAY(SELECT id FROM "OAuthClient" WHERE "lastUsedAt" < ${CUTOFF}
                              ORDER BY "lastUsedAt" LIMIT $2))
        AND c."lastUsedAt" < ${CUTOFF}
        AND NOT EXISTS (SELECT 1 FROM "OAuthGrant" g
                         WHERE g."clientId" = c.id AND g."revokedAt" IS NULL AND g."refreshExpiresAt" > now())`,
    [idleMs, batch],
  );
  return rowCount ?? 0;
}

/**
 * Deletes a batch of grants that ended (revoked, or their refresh token expired) longer than
 * `keptMs` ago, with their spent refresh tokens; answers how many. A live grant is never read.
 */
export async function deleteEndedGrants(pool: Pool, keptMs: number, batch: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM "OAuthGrant"
      WHERE id = ANY(ARRAY(
              (SELECT id FROM "OAuthGrant" WHERE "revokedAt" < ${CUTOFF} ORDER BY "revokedAt" LIMIT $2)
              UNION
              (SELECT id FROM "OAuthGrant" WHERE "refreshExpiresAt" < ${CUTOFF} ORDER BY "refreshExpiresAt" LIMIT $2)))
        AND ("revokedAt" < ${CUTOFF} OR "refreshExpiresAt" < ${CUTOFF})`,
    [keptMs, batch],
  );
  return rowCount ?? 0;
}

/** Whether the grant still works: not revoked, its client and user not deleted. */
export async function grantIsLive(pool: Pool, grantId: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'oauth-grant-live',
    text: `SELECT 1 FROM "OAuthGrant" WHERE id = $1 AND "revokedAt" IS NULL`,
    values: [grantId],
  });
  return rowCount === 1;
}
