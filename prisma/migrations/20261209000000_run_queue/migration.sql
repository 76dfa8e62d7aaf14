-- A chat's turns queued behind its active run (a send with onActiveRun "enqueue" or "interrupt",
-- issue 49). A queued turn is a Run row like any other, QUEUED, with its place in the chat's line
-- in "queueSeq"; the chat's head run (the one running, or about to) has none. The one-active-run
-- index now holds for the head alone, so a chat still never has two runs in its workflow.
--
-- Everything that decides who goes where takes the chat's row lock first: an admission, the
-- statement that ends the head (and promotes the next turn in it), a promotion the dispatcher
-- repairs. The functions below do their reads after that lock, in plpgsql, whose every query takes
-- a fresh snapshot: a statement's own snapshot is taken before its lock wait, and would miss a
-- turn admitted, or a run ended, while it waited.
ALTER TABLE "Run" ADD COLUMN "queueSeq" BIGINT, ADD COLUMN "promotedAt" TIMESTAMPTZ(3);

DROP INDEX "Run_one_active_per_chat";
CREATE UNIQUE INDEX "Run_one_active_per_chat" ON "Run"("chatId")
  WHERE "status" IN ('QUEUED', 'RUNNING', 'WAITING') AND "queueSeq" IS NULL;
CREATE INDEX "Run_chat_queue_idx" ON "Run"("chatId", "queueSeq")
  WHERE "status" = 'QUEUED' AND "queueSeq" IS NOT NULL;

-- Locks the chat's row (the queue's lock); true, so a statement can take it in a WHERE clause
-- before it locks a run of the chat (finishRun: chat, then run, as an admission does).
CREATE FUNCTION chat_queue_lock(chat_id UUID) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM "Chat" WHERE id = chat_id FOR NO KEY UPDATE;
  RETURN TRUE;
END $$;

-- Where a turn goes in an existing chat of the user, for the admission statement (core/runs/store.ts
-- insertTurn): `head` (the chat has no turn: it runs now), `queued` (behind the head, at `position`),
-- `busy` (mode reject), `full` (mode enqueue, max_queued turns already waiting) or `no-chat`; no
-- row when the turn would run now and `admit` is false (the user has no place for one more run).
-- With mode interrupt, the head's cancel is recorded (`cancelled`, for the caller to tell its
-- execution) and this turn is queued first, so the head's ending makes it the head: one decision,
-- under the chat's lock, so the chat never has two heads, nor a moment with neither.
CREATE FUNCTION chat_turn_place(chat_id UUID, user_id UUID, mode TEXT, max_queued INTEGER, admit BOOLEAN)
RETURNS TABLE (outcome TEXT, queue_seq BIGINT, "position" INTEGER, cancelled JSONB)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  has_head BOOLEAN;
  waiting INTEGER;
  last_seq BIGINT;
BEGIN
  PERFORM 1 FROM "Chat" WHERE id = chat_id AND "userId" = user_id AND "deletedAt" IS NULL FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'no-chat', NULL::BIGINT, NULL::INTEGER, NULL::JSONB;
    RETURN;
  END IF;
  SELECT EXISTS (SELECT 1 FROM "Run" WHERE "chatId" = chat_id AND status IN ('QUEUED', 'RUNNING', 'WAITING')
                    AND "queueSeq" IS NULL) INTO has_head;
  SELECT count(*) FILTER (WHERE "cancelRequestedAt" IS NULL), max("queueSeq") INTO waiting, last_seq
    FROM "Run" WHERE "chatId" = chat_id AND status = 'QUEUED' AND "queueSeq" IS NOT NULL;
  -- Turns queued with no head (promotion pending a repair) still come first.
  IF NOT has_head AND last_seq IS NULL THEN
    IF admit THEN
      RETURN QUERY SELECT 'head', NULL::BIGINT, NULL::INTEGER, NULL::JSONB;
    END IF;
    RETURN;
  END IF;
  IF mode = 'enqueue' THEN
    IF waiting >= max_queued THEN
      RETURN QUERY SELECT 'full', NULL::BIGINT, NULL::INTEGER, NULL::JSONB;
      RETURN;
    END IF;
    RETURN QUERY SELECT 'queued', COALESCE(last_seq, 0) + 1, waiting + 1, NULL::JSONB;
    RETURN;
  END IF;
  IF mode = 'interrupt' THEN
    IF NOT has_head THEN
      -- No head to stop (the line stalled): the turn runs now, before the waiting turns.
      IF admit THEN
        RETURN QUERY SELECT 'head', NULL::BIGINT, NULL::INTEGER, '[]'::JSONB;
      END IF;
      RETURN;
    END IF;
    IF waiting >= max_queued THEN
      RETURN QUERY SELECT 'full', NULL::BIGINT, NULL::INTEGER, NULL::JSONB;
      RETURN;
    END IF;
    -- The head's cancel is recorded and the turn goes first in the line: the head's ending
    -- promotes it. The turns already waiting keep their order behind it.
    RETURN QUERY
      WITH c AS (
        UPDATE "Run" SET "cancelRequestedAt" = COALESCE("cancelRequestedAt", now()), "updatedAt" = now()
         WHERE "chatId" = chat_id AND status IN ('QUEUED', 'RUNNING', 'WAITING') AND "queueSeq" IS NULL
        RETURNING id, "triggerRunId"
      )
      SELECT 'queued', COALESCE((SELECT min("queueSeq") FROM "Run" WHERE "chatId" = chat_id
                                    AND status = 'QUEUED' AND "queueSeq" IS NOT NULL), 1) - 1, 1,
             jsonb_agg(jsonb_build_object('runId', c.id, 'triggerRunId', c."triggerRunId", 'queued', false))
        FROM c;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'busy', NULL::BIGINT, NULL::INTEGER, NULL::JSONB;
END $$;

-- Makes the chat's first waiting turn its head, when the chat has none (its head has just ended,
-- in the calling statement, or a repair finds the line stalled): one row, the promoted run, or
-- none. A turn whose cancel is recorded is never promoted; its canceller ends it.
CREATE FUNCTION run_promote_next(chat_id UUID) RETURNS SETOF "Run"
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  next_id UUID;
BEGIN
  PERFORM 1 FROM "Chat" WHERE id = chat_id AND "deletedAt" IS NULL FOR NO KEY UPDATE;
  IF NOT FOUND OR EXISTS (SELECT 1 FROM "Run" WHERE "chatId" = chat_id
                             AND status IN ('QUEUED', 'RUNNING', 'WAITING') AND "queueSeq" IS NULL) THEN
    RETURN;
  END IF;
  LOOP
    SELECT id INTO next_id FROM "Run"
     WHERE "chatId" = chat_id AND status = 'QUEUED' AND "queueSeq" IS NOT NULL AND "cancelRequestedAt" IS NULL
     ORDER BY "queueSeq" LIMIT 1;
    IF next_id IS NULL THEN
      RETURN;
    END IF;
    -- Checked again under the row's lock: a cancel committed meanwhile passes it over.
    RETURN QUERY
      UPDATE "Run" SET "queueSeq" = NULL, "promotedAt" = now(), "updatedAt" = now()
       WHERE id = next_id AND status = 'QUEUED' AND "queueSeq" IS NOT NULL AND "cancelRequestedAt" IS NULL
      RETURNING *;
    IF FOUND THEN
      -- The turn is said now, after the answer of the run that ended (written by the calling
      -- statement at now()): the chat's history, and the model's, reads it there.
      UPDATE "Message" SET "createdAt" = GREATEST(clock_timestamp(), now() + interval '1 millisecond')
       WHERE id = (SELECT "messageId" FROM "Run" WHERE id = next_id);
      RETURN;
    END IF;
  END LOOP;
END $$;

-- A turn waiting in its chat's queue takes no place under the user's MAX_ACTIVE_RUNS_PER_USER: it
-- runs nothing until its chat's head has ended, and then takes that run's place. The chat's queue
-- has a cap of its own (MAX_QUEUED_TURNS_PER_CHAT).
CREATE OR REPLACE FUNCTION user_run_place_free(user_id UUID, max_active INTEGER) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(20261123, hashtext(user_id::text));
  RETURN (SELECT count(*) FROM "Run"
           WHERE "userId" = user_id AND status IN ('QUEUED', 'RUNNING', 'WAITING') AND "queueSeq" IS NULL) < max_active;
END $$;
