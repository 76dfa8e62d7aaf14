-- Runs as a resource, regenerate and fork (issue 49).

-- A send's metadata: up to 16 string pairs, shown in the snapshot and the agent events.
ALTER TABLE "Run" ADD COLUMN "metadata" JSONB NOT NULL DEFAULT '{}';

-- A regenerated answer is another run of the same user message: a message may have several runs.
DROP INDEX "Run_messageId_key";
CREATE INDEX "Run_messageId_idx" ON "Run"("messageId");

-- The runs lists walk these in their order, newest first, id breaking ties (the cursor's keyset):
-- a chat's runs; a user's runs; a user's runs of one status (a status filter reads one range of it
-- per status asked for, each in order, and merges them).
DROP INDEX "Run_chatId_createdAt_idx";
CREATE INDEX "Run_chatId_createdAt_id_idx" ON "Run"("chatId", "createdAt" DESC, "id" DESC);
CREATE INDEX "Run_userId_createdAt_id_idx" ON "Run"("userId", "createdAt" DESC, "id" DESC);
CREATE INDEX "Run_userId_status_createdAt_id_idx" ON "Run"("userId", "status", "createdAt" DESC, "id" DESC);

-- Each metadata pair of a run, for `metadata[<key>]=<value>`: the user's runs carrying one pair,
-- newest first, are one range of this index, however many runs the user has and however common
-- or rare the pair is (a GIN index on "Run".metadata finds the pair's runs of every user, and
-- leaves their order to a sort).
CREATE TABLE "RunMetadata" (
    "runId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    -- The run's: the range is read in the runs lists' order.
    "createdAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "RunMetadata_pkey" PRIMARY KEY ("runId", "key")
);

CREATE INDEX "RunMetadata_userId_key_value_createdAt_runId_idx" ON "RunMetadata"("userId", "key", "value", "createdAt" DESC, "runId" DESC);

ALTER TABLE "RunMetadata" ADD CONSTRAINT "RunMetadata_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The user message an assistant message answers: several answers to one message (regenerated) are
-- its alternatives, the newest the one the model reads on; a fork's copies keep the link without
-- their runs.
ALTER TABLE "Message" ADD COLUMN "replyToId" UUID;

UPDATE "Message" m SET "replyToId" = r."messageId"
  FROM "Run" r
 WHERE m.role = 'assistant' AND r.id = m."runId";

CREATE INDEX "Message_replyToId_createdAt_id_idx" ON "Message"("replyToId", "createdAt", "id");

ALTER TABLE "Message" ADD CONSTRAINT "Message_replyToId_fkey" FOREIGN KEY ("replyToId") REFERENCES "Message"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A fork shares its source's stored files: its attachments are rows of its own naming the same
-- storage keys (the bytes, and "StoredFile", once).
DROP INDEX "Attachment_storageKey_key";
CREATE INDEX "Attachment_storageKey_idx" ON "Attachment"("storageKey");
