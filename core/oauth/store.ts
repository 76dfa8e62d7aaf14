import type { Pool } from 'pg';

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
}

export async function insertCode(
  pool: Pool,
  code: CodeRow & { codeHash: string; ttlSeconds: number },
): Promise<void> {
  await pool.query(
    `INSERT INTO "OAuthCode" ("codeHash", "clientId", "userId", "codeChallenge", "redirectUri", resource, "expiresAt")
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))`,
    [
      code.codeHash,
      code.clientId,
      code.userId,
      code.codeChallenge,
      code.redirectUri,
      code.resource,
      code.ttlSeconds,
    ],
  );
}

/** The client's unexpired code, without consuming it (the token route first checks its PKCE). */
export async function selectCode(
  pool: Pool,
  codeHash: string,
  clientId: string,
): Promise<CodeRow | undefined> {
  const { rows } = await pool.query<CodeRow>(
    `SELECT "clientId", "userId", "codeChallenge", "redirectUri", resource FROM "OAuthCode"
      WHERE "codeHash" = $1 AND "clientId" = $2 AND "expiresAt" > now()`,
    [codeHash, clientId],
  );
  return rows[0];
}

/** Consumes the code and records its grant in one statement: a code is exchanged once only. */
export async function exchangeCode(
  pool: Pool,
  grant: {
    codeHash: string;
    clientId: string;
    grantId: string;
    accessTokenHash: string;
    accessTtlSeconds: number;
    refreshTokenHash: string;
    refreshTtlSeconds: number;
  },
): Promise<CodeRow | undefined> {
  const { rows } = await pool.query<CodeRow>(
    `WITH used AS (
       DELETE FROM "OAuthCode" WHERE "codeHash" = $1 AND "clientId" = $2 AND "expiresAt" > now()
       RETURNING "clientId", "userId", "codeChallenge", "redirectUri", resource
     ), granted AS (
       INSERT INTO "OAuthGrant" (id, "userId", "clientId", "clientName", "accessTokenHash", "accessExpiresAt",
                                 "refreshTokenHash", "refreshExpiresAt")
       SELECT $3, used."userId", used."clientId", COALESCE(c.metadata->>'client_name', used."clientId"),
              $4, now() + make_interval(secs => $5), $6, now() + make_interval(secs => $7)
         FROM used JOIN "OAuthClient" c ON c.id = used."clientId"
     )
     SELECT * FROM used`,
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
  return rows[0];
}

/**
 * Rotates a live grant's tokens: the presented refresh token is replaced, so it works once only.
 * Undefined when it is unknown, spent, expired, revoked or another client's.
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
  },
): Promise<{ id: string } | undefined> {
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE "OAuthGrant"
        SET "accessTokenHash" = $3, "accessExpiresAt" = now() + make_interval(secs => $4),
            "refreshTokenHash" = $5, "refreshExpiresAt" = now() + make_interval(secs => $6)
      WHERE "refreshTokenHash" = $1 AND "clientId" = $2 AND "revokedAt" IS NULL AND "refreshExpiresAt" > now()
      RETURNING id`,
    [
      rotation.refreshTokenHash,
      rotation.clientId,
      rotation.accessTokenHash,
      rotation.accessTtlSeconds,
      rotation.newRefreshTokenHash,
      rotation.refreshTtlSeconds,
    ],
  );
  return rows[0];
}

/** The live grant of an access token, marking it used (at most once a minute). */
export async function checkAccessToken(
  pool: Pool,
  accessTokenHash: string,
): Promise<{ id: string; userId: string; clientId: string; accessExpiresAt: Date } | undefined> {
  const { rows } = await pool.query<{ id: string; userId: string; clientId: string; accessExpiresAt: Date }>(
    `UPDATE "OAuthGrant" SET "lastUsedAt" = now()
      WHERE "accessTokenHash" = $1 AND "revokedAt" IS NULL AND "accessExpiresAt" > now()
        AND ("lastUsedAt" IS NULL OR "lastUsedAt" < now() - interval '1 minute')
      RETURNING id, "userId", "clientId", "accessExpiresAt"`,
    [accessTokenHash],
  );
  if (rows[0]) return rows[0];
  const { rows: fresh } = await pool.query<{
    id: string;
    userId: string;
    clientId: string;
    accessExpiresAt: Date;
  }>(
    `SELECT id, "userId", "clientId", "accessExpiresAt" FROM "OAuthGrant"
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

export async function selectGrants(pool: Pool, userId: string): Promise<GrantRow[]> {
  const { rows } = await pool.query<GrantRow>(
    `SELECT id, "clientId", "clientName", "lastUsedAt", "createdAt" FROM "OAuthGrant"
      WHERE "userId" = $1 AND "revokedAt" IS NULL ORDER BY "createdAt" DESC`,
    [userId],
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
