-- Gateways keep the caller of a recently checked API key in memory for the polls they answer
-- without reading the database (a conditional poll of an unchanged run): a key revoked or deleted
-- (its user deleted) tells every gateway at once, at commit, so it stops working everywhere on its
-- very next call, as before.
CREATE FUNCTION api_key_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('api_keys', OLD.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "ApiKey_revoked" AFTER UPDATE ON "ApiKey"
  FOR EACH ROW WHEN (OLD."revokedAt" IS NULL AND NEW."revokedAt" IS NOT NULL)
  EXECUTE FUNCTION api_key_notify();

CREATE TRIGGER "ApiKey_deleted" AFTER DELETE ON "ApiKey"
  FOR EACH ROW EXECUTE FUNCTION api_key_notify();
