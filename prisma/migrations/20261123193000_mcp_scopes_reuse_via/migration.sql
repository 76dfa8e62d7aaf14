-- OAuth scopes: what the user consented to (`scopes`, kept by the grant and its code) and what the
-- current access token carries (`accessScopes`, narrower when a refresh asked for less). Grants
-- and codes from before scopes were consented to everything the consent page then named. (Nullable,
-- as Prisma makes a list column; every row written has them.)
ALTER TABLE "OAuthCode" ADD COLUMN "scopes" TEXT[] DEFAULT ARRAY['read', 'write'];
ALTER TABLE "OAuthCode" ALTER COLUMN "scopes" DROP DEFAULT;
ALTER TABLE "OAuthGrant" ADD COLUMN "scopes" TEXT[] DEFAULT ARRAY['read', 'write'];
ALTER TABLE "OAuthGrant" ALTER COLUMN "scopes" DROP DEFAULT;
ALTER TABLE "OAuthGrant" ADD COLUMN "accessScopes" TEXT[] DEFAULT ARRAY['read', 'write'];
ALTER TABLE "OAuthGrant" ALTER COLUMN "accessScopes" DROP DEFAULT;

-- Refresh tokens a rotation replaced, by hash: one presented again was copied, so its grant is
-- revoked whole (RFC 9700 4.14.2).
CREATE TABLE "OAuthSpentRefreshToken" (
    "tokenHash" TEXT NOT NULL,
    "grantId" UUID NOT NULL,
    "spentAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "OAuthSpentRefreshToken_pkey" PRIMARY KEY ("tokenHash")
);
CREATE INDEX "OAuthSpentRefreshToken_grantId_spentAt_idx" ON "OAuthSpentRefreshToken"("grantId", "spentAt");
ALTER TABLE "OAuthSpentRefreshToken" ADD CONSTRAINT "OAuthSpentRefreshToken_grantId_fkey" FOREIGN KEY ("grantId") REFERENCES "OAuthGrant"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The route a tool call came by (rest, mcp or console), as "Run".via: a direct call its own, a
-- run's call its run's.
ALTER TABLE "ToolCall" ADD COLUMN "via" TEXT NOT NULL DEFAULT 'rest';
UPDATE "ToolCall" t SET "via" = r."via" FROM "Run" r WHERE t."runId" = r.id AND r."via" <> 'rest';
