-- A wait an assistant opened over MCP with an OAuth access token (wait_for_run,
-- resources/subscribe) ends when its grant does, as the assistant's next request would be
-- refused: revoked by the user or by the client, revoked for a reused refresh token, or gone with
-- its client or its user. Every gateway hears it at commit, as it hears of a revoked API key
-- (migration api_key_notify) or an ended session (migration session_notify).
CREATE FUNCTION oauth_grant_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('oauth_grants', OLD.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "OAuthGrant_revoked" AFTER UPDATE ON "OAuthGrant"
  FOR EACH ROW WHEN (OLD."revokedAt" IS NULL AND NEW."revokedAt" IS NOT NULL)
  EXECUTE FUNCTION oauth_grant_notify();

CREATE TRIGGER "OAuthGrant_deleted" AFTER DELETE ON "OAuthGrant"
  FOR EACH ROW EXECUTE FUNCTION oauth_grant_notify();
