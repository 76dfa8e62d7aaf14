-- The first answer to a request sent with an Idempotency-Key, per user and key, kept 24 hours.
-- A row with no outcome is a request still running; "lockedUntil" bounds how long it may hold
-- the key should its process die.
CREATE TABLE "IdempotencyKey" (
    "userId" UUID NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "operation" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "owner" UUID NOT NULL,
    "outcome" JSONB,
    "lockedUntil" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotencyKey_pkey" PRIMARY KEY ("userId", "key")
);

CREATE INDEX "IdempotencyKey_createdAt_idx" ON "IdempotencyKey"("createdAt");

ALTER TABLE "IdempotencyKey" ADD CONSTRAINT "IdempotencyKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
