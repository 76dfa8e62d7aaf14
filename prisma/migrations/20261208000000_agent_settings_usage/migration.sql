-- The agent's settings, its model calls' usage and cost, budgets and long chats (issue 48).

-- A chat's defaults for its runs' settings (model, instructions, maxSteps, tools), each optional;
-- a run's settings as it used them, resolved at admission, and the budget its send gave.
ALTER TABLE "Chat" ADD COLUMN "agentSettings" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "Run" ADD COLUMN "settings" JSONB, ADD COLUMN "budget" JSONB;

-- One model call of a run's step: its reply, or a summary a compaction asked for. Its price at
-- the model's rate for the context is taken from the balance before the call (RESERVED), and
-- settled once the provider has counted the tokens (CHARGED: what they cost is kept, the rest
-- given back) or the call is given up (RELEASED: all given back), by the trigger below, like a
-- tool call's. A step's reply is one row however often the step is retried, so it is charged once.
CREATE TYPE "ModelCallStatus" AS ENUM ('RESERVED', 'CHARGED', 'RELEASED');
CREATE TABLE "ModelCall" (
    "id" UUID NOT NULL,
    "runId" UUID NOT NULL,
    "userId" UUID NOT NULL,
    "step" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "seq" INTEGER NOT NULL DEFAULT 0,
    "model" TEXT NOT NULL,
    "status" "ModelCallStatus" NOT NULL DEFAULT 'RESERVED',
    "creditReserved" DECIMAL(12,4) NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "cachedInputTokens" INTEGER NOT NULL DEFAULT 0,
    "credits" DECIMAL(12,4) NOT NULL DEFAULT 0,
    "reply" JSONB,
    "startedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),
    CONSTRAINT "ModelCall_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "ModelCall_runId_step_kind_seq_key" ON "ModelCall"("runId", "step", "kind", "seq");
ALTER TABLE "ModelCall" ADD CONSTRAINT "ModelCall_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ModelCall" ADD CONSTRAINT "ModelCall_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE FUNCTION model_call_ended_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "User" SET "creditBalance" = "creditBalance" + OLD."creditReserved"
                    - CASE WHEN NEW.status = 'CHARGED' THEN NEW.credits ELSE 0 END
   WHERE id = NEW."userId";
  RETURN NULL;
END $$;

CREATE TRIGGER model_call_ended_settle AFTER UPDATE OF status ON "ModelCall" FOR EACH ROW
  WHEN (OLD.status = 'RESERVED' AND NEW.status <> 'RESERVED')
  EXECUTE FUNCTION model_call_ended_settle();

-- A model call's charge is a row of the same ledger as a tool call's: each row is one or the other.
ALTER TABLE "CreditLedgerEntry" ALTER COLUMN "toolCallId" DROP NOT NULL,
  ADD COLUMN "modelCallId" UUID,
  ADD CONSTRAINT "CreditLedgerEntry_one_source" CHECK (num_nonnulls("toolCallId", "modelCallId") = 1);
CREATE UNIQUE INDEX "CreditLedgerEntry_modelCallId_key" ON "CreditLedgerEntry"("modelCallId");
ALTER TABLE "CreditLedgerEntry" ADD CONSTRAINT "CreditLedgerEntry_modelCallId_fkey" FOREIGN KEY ("modelCallId") REFERENCES "ModelCall"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A long chat's summary (compaction): what the model wrote of its messages up to and including
-- (throughCreatedAt, throughMessageId), in its place in the context; extended as the chat grows.
CREATE TABLE "ChatSummary" (
    "chatId" UUID NOT NULL,
    "summary" TEXT NOT NULL,
    "throughCreatedAt" TIMESTAMPTZ(3) NOT NULL,
    "throughMessageId" UUID NOT NULL,
    "messages" INTEGER NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ChatSummary_pkey" PRIMARY KEY ("chatId")
);
ALTER TABLE "ChatSummary" ADD CONSTRAINT "ChatSummary_chatId_fkey" FOREIGN KEY ("chatId") REFERENCES "Chat"("id") ON DELETE CASCADE ON UPDATE CASCADE;
