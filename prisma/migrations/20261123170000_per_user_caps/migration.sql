-- Per-user caps and the credit balance (issue 17). A user's active runs, active tool calls and
-- balance are counters on the user's row: admission takes a slot (and reserves the price) with one
-- conditional UPDATE of that row, which PostgreSQL re-checks on the row's latest version, so two
-- racing admissions cannot both take the last slot. The triggers below give the slot (and the
-- unspent reservation) back in the very statement that ends the run or the call, whichever code
-- path ends it, so a counter can never drift from the rows it counts.
ALTER TABLE "User"
  ADD COLUMN "activeRuns" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "activeToolCalls" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "creditBalance" DECIMAL(14,4) NOT NULL DEFAULT 0;
ALTER TABLE "ToolCall" ADD COLUMN "creditReserved" DECIMAL(12,4) NOT NULL DEFAULT 0;

-- Accounts older than the balance keep working: they start with 100 credits (the default
-- CREDIT_GRANT_ON_SIGN_UP); an operator can set any balance afterwards.
UPDATE "User" u SET "creditBalance" = 100,
  "activeRuns" = (SELECT count(*) FROM "Run" r WHERE r."userId" = u.id AND r.status IN ('QUEUED', 'RUNNING', 'WAITING')),
  "activeToolCalls" = (SELECT count(*) FROM "ToolCall" t WHERE t."userId" = u.id AND t.status = 'RUNNING');

CREATE FUNCTION run_ended_release_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "User" SET "activeRuns" = GREATEST("activeRuns" - 1, 0) WHERE id = NEW."userId";
  RETURN NULL;
END $$;

CREATE TRIGGER run_ended_release_slot AFTER UPDATE OF status ON "Run" FOR EACH ROW
  WHEN (OLD.status IN ('QUEUED', 'RUNNING', 'WAITING') AND NEW.status IN ('COMPLETE', 'FAILED', 'CANCELLED'))
  EXECUTE FUNCTION run_ended_release_slot();

-- A call that succeeded keeps what it cost of its reservation; a failed one gets it all back.
CREATE FUNCTION tool_call_ended_settle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "User" SET "activeToolCalls" = GREATEST("activeToolCalls" - 1, 0),
         "creditBalance" = "creditBalance" + OLD."creditReserved"
                           - CASE WHEN NEW.status = 'SUCCEEDED' THEN COALESCE(NEW."creditCost", 0) ELSE 0 END
   WHERE id = NEW."userId";
  RETURN NULL;
END $$;

CREATE TRIGGER tool_call_ended_settle AFTER UPDATE OF status ON "ToolCall" FOR EACH ROW
  WHEN (OLD.status = 'RUNNING' AND NEW.status <> 'RUNNING')
  EXECUTE FUNCTION tool_call_ended_settle();
