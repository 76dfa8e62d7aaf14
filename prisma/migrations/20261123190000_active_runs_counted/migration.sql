-- A user's active runs are counted from the runs themselves, not kept as a counter on the user's
-- row (issue 20). The counter made that row the hottest one in the database: every admission and
-- every run's ending (its trigger) updated it and held its lock through the commit's flush, so all
-- the sends and endings of one user, over all their chats, queued behind each other (the bench saw
-- endings wait 20 ms on it). Admission now serialises only against the same user's admissions (an
-- advisory lock, core/runs/store.ts insertTurn) and counts the user's unfinished runs on the index
-- below; an ending touches nothing of the user's.
DROP TRIGGER run_ended_release_slot ON "Run";
DROP FUNCTION run_ended_release_slot();
ALTER TABLE "User" DROP COLUMN "activeRuns";

CREATE INDEX "Run_userId_active_idx" ON "Run"("userId") WHERE "status" IN ('QUEUED', 'RUNNING', 'WAITING');
