-- Issue 50: what keeps the hot reads flat on a database a year old, and what lets the retention
-- pass (operations/retention.ts) find what it deletes without reading what it keeps. Each index is
-- built here holding writes on its table (seconds on a year's data); IF NOT EXISTS lets an
-- operator build them beforehand without that, CONCURRENTLY (docs/deployment.md).

-- Title search (`GET /api/v1/chats?q=`, MCP list_chats) is ILIKE '%…%', which no btree serves: a
-- user's matches are found by trigram among that user's chats (btree_gin puts the user's id in the
-- same GIN index), instead of by reading every chat of the user, or every user's. Every send
-- updates its chat's row, and so adds the row's entries anew: they wait in GIN's pending list,
-- which every search reads whole, until it is merged. A list of at most 64 kB keeps that read
-- small (its default, 4 MB, made a search read 250 pages), and its merge, by the write that
-- fills it, short.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX IF NOT EXISTS "Chat_userId_title_trgm_idx" ON "Chat" USING gin ("userId", title gin_trgm_ops)
  WITH (gin_pending_list_limit = 64);

-- `favorite=true`: the user's favourites in the list's order, walked as the list walks its index,
-- so a page reads its rows and no others however few of the user's chats are favourites.
CREATE INDEX IF NOT EXISTS "Chat_favorite_userId_activityAt_id_idx" ON "Chat"("userId", "activityAt" DESC, id DESC)
  WHERE "isFavorite" AND "deletedAt" IS NULL;

-- Soft-deleted chats past their grace period, for their purge.
CREATE INDEX IF NOT EXISTS "Chat_deletedAt_idx" ON "Chat"("deletedAt") WHERE "deletedAt" IS NOT NULL;

-- The prune of old stream events reads the old events themselves: none of a run is older than the
-- run's ending, so an event created before the cutoff is the only kind whose run may have ended
-- before it. (It used to join every event to its run by the run's "finishedAt", unindexed: the
-- whole Run table, every pass, to delete next to nothing.)
CREATE INDEX IF NOT EXISTS "RunEvent_createdAt_idx" ON "RunEvent"("createdAt");

-- Settled deliveries (with their attempts) past WEBHOOK_DELIVERIES_RETENTION, oldest first.
CREATE INDEX IF NOT EXISTS "WebhookDelivery_createdAt_idx" ON "WebhookDelivery"("createdAt");

-- Attempts whose signed content and headers are still kept: the index shrinks as they are cleared.
CREATE INDEX IF NOT EXISTS "WebhookAttempt_content_startedAt_idx" ON "WebhookAttempt"("startedAt")
  WHERE "signedContent" IS NOT NULL OR "requestHeaders" IS NOT NULL;

-- A chat's purge deletes its row last: the tool calls that name it (direct calls of that chat) are
-- found by this, not by reading every call (ON DELETE SET NULL).
CREATE INDEX IF NOT EXISTS "ToolCall_chatId_idx" ON "ToolCall"("chatId");

-- Expired sessions; revoked or expired OAuth grants; uploads never attached to a message.
CREATE INDEX IF NOT EXISTS "Session_expiresAt_idx" ON "Session"("expiresAt");
CREATE INDEX IF NOT EXISTS "OAuthGrant_revokedAt_idx" ON "OAuthGrant"("revokedAt");
CREATE INDEX IF NOT EXISTS "OAuthGrant_refreshExpiresAt_idx" ON "OAuthGrant"("refreshExpiresAt");
CREATE INDEX IF NOT EXISTS "Attachment_unattached_createdAt_idx" ON "Attachment"("createdAt") WHERE "messageId" IS NULL;
