-- A per-user storage quota (issue 45): every object the service stores for a user, an upload or a
-- tool's output, is recorded here with its size before its bytes are written, and the user's
-- total is a counter on their row. The record and the counter change in one statement whose
-- conditional UPDATE PostgreSQL re-checks on the row's latest version, so racing uploads cannot
-- both take the last bytes of MAX_STORED_BYTES_PER_USER. Keyed by the object's storage key: a
-- retried tool attempt that writes its output again is counted once.
ALTER TABLE "User" ADD COLUMN "storedBytes" BIGINT NOT NULL DEFAULT 0;

CREATE TABLE "StoredFile" (
    "storageKey" TEXT NOT NULL,
    "userId" UUID NOT NULL,
    "sizeBytes" BIGINT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StoredFile_pkey" PRIMARY KEY ("storageKey")
);

CREATE INDEX "StoredFile_userId_idx" ON "StoredFile"("userId");

ALTER TABLE "StoredFile" ADD CONSTRAINT "StoredFile_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- What is known of the files stored before: every attachment (uploads, and the images of tools
-- attached to an answer). Other tool outputs of the past were not recorded with a size.
INSERT INTO "StoredFile" ("storageKey", "userId", "sizeBytes", "createdAt")
SELECT "storageKey", "userId", "sizeBytes", "createdAt" FROM "Attachment"
ON CONFLICT ("storageKey") DO NOTHING;

UPDATE "User" u SET "storedBytes" = f.total
  FROM (SELECT "userId", sum("sizeBytes") AS total FROM "StoredFile" GROUP BY "userId") f
 WHERE u.id = f."userId";
