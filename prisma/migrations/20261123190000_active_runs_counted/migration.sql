-- A user's active runs are counted from the runs themselves, not kept as a counter on the user's
-- row (issue 20). The counter made that row the hottest one in the database: every admission and
-- every run's ending (its trigger) updated it and held its lock through the commit's flush, so all
-- the sends and endings of one user, over all their chats, queued behind each other (under the
-- bench's sustained load an ending waited 20 ms on it on average). Now an ending touches nothing
-- of the user's, and admissions serialise only against the same user's admissions.
DROP TRIGGER run_ended_release_slot ON "Run";
DROP FUNCTION run_ended_release_slot();
ALTER TABLE "User" DROP COLUMN "activeRuns";

CREATE INDEX "Run_userId_active_idx" ON "Run"("userId") WHERE "status" IN ('QUEUED', 'RUNNING', 'WAITING');

-- Whether the user may start one more run, called by the admission statement (core/runs/store.ts
-- insertTurn). It takes a lock only this user's admissions take, held until the calling statement's
-- transaction ends, and counts afterwards: a VOLATILE function takes a fresh snapshot for each query
-- it runs, so the count sees every admission committed before the lock was granted. Two racing
-- sends therefore cannot both take the last place, and the lock is held for one statement and its
-- commit, never across a round trip to the client.
CREATE FUNCTION user_run_place_free(user_id UUID, max_active INTEGER) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(20261123, hashtext(user_id::text));
  RETURN (SELECT count(*) FROM "Run"
           WHERE "userId" = user_id AND status IN ('QUEUED', 'RUNNING', 'WAITING')) < max_active;
END $$;
