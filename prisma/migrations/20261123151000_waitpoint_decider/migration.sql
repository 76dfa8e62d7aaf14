-- Who decided a plan, and when: the user with the API key or the session they came with, and the
-- transport. Plain ids, no foreign keys: the record outlives a key or session deleted later.
ALTER TABLE "Waitpoint" ADD COLUMN "decidedByUserId" UUID,
                        ADD COLUMN "decidedByApiKeyId" UUID,
                        ADD COLUMN "decidedBySessionId" UUID,
                        ADD COLUMN "decidedVia" TEXT,
                        ADD COLUMN "decidedAt" TIMESTAMPTZ(3);
