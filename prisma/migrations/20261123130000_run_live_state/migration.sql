-- What a live run's workflow last said through its query, shared by every gateway: a poll that
-- finds it older than a second claims the next query (one gateway wins the claim), the others show
-- this answer. A row per polled run, gone with its run.
CREATE TABLE "RunLiveState" (
    "runId" UUID NOT NULL,
    "askedAt" TIMESTAMPTZ(3) NOT NULL,
    "step" INTEGER,
    "activity" TEXT,
    CONSTRAINT "RunLiveState_pkey" PRIMARY KEY ("runId"),
    CONSTRAINT "RunLiveState_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
