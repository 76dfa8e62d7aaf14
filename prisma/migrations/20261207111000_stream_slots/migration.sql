-- Open streams and waits per user (issue 45): a live run stream, a wait_for_run, a
-- resources/subscribe each hold a slot while open, and MAX_OPEN_STREAMS_PER_USER bounds them
-- over every gateway. A gateway extends its slots while it holds them, so those of a gateway that
-- died expire on their own (the slot's "expiresAt"), and free their places within a minute.
CREATE TABLE "StreamSlot" (
    "id" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "StreamSlot_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "StreamSlot_userId_idx" ON "StreamSlot"("userId");

ALTER TABLE "StreamSlot" ADD CONSTRAINT "StreamSlot_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
