-- OAuth rows no longer grow without bound, and sign-out everywhere can tell a key's session.
-- A client records when it was last used (registered, a code or grant of it issued, a grant of it
-- refreshed): one with no live grant, unused for OAUTH_CLIENT_IDLE_TTL, is deleted by the
-- reconciler's sweep.
ALTER TABLE "OAuthClient" ADD COLUMN "lastUsedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
CREATE INDEX "OAuthClient_lastUsedAt_idx" ON "OAuthClient"("lastUsedAt");

-- A code is kept, marked with the grant it was exchanged for, until it expires: presented again,
-- it revokes that grant (RFC 6749 4.1.2). Expired codes are swept.
ALTER TABLE "OAuthCode" ADD COLUMN "grantId" UUID;
CREATE INDEX "OAuthCode_expiresAt_idx" ON "OAuthCode"("expiresAt");

-- The sweep of a client's rows (and its cascade), and of grants long revoked or expired.
CREATE INDEX "OAuthGrant_clientId_idx" ON "OAuthGrant"("clientId");
CREATE INDEX "OAuthGrant_revokedAt_idx" ON "OAuthGrant"("revokedAt");
CREATE INDEX "OAuthGrant_refreshExpiresAt_idx" ON "OAuthGrant"("refreshExpiresAt");

-- The session a key was created in (a session ends before its keys do, so no foreign key): sign
-- out everywhere revokes the keys of every other session. Keys older than this column have none.
ALTER TABLE "ApiKey" ADD COLUMN "createdBySessionId" UUID;
