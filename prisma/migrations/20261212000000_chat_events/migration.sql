-- A chat's own stream (GET /api/v1/chats/{chatId}/events, issue 49): every event of every run of
-- the chat, in the order they were committed, resumable with `Last-Event-ID` from any gateway.
--
-- A run's events are numbered from a counter of its chat's now, not of the run: one number orders
-- the events of the chat's turns among themselves (a queued turn cancelled while the head streams),
-- and a run's own numbers still grow in commit order, which is all its stream's resume reads
-- (`seq > Last-Event-ID`), with gaps where another run of the chat spoke. The counter is taken at
-- commit, as the run's was: the chat's first, so two transactions of one chat queue at the chat's
-- counter and never hold two runs' counters in opposite orders. Each counter starts past every
-- number its chat's runs have used, so no event is numbered twice. Events recorded before this
-- have no chat: a chat stream begins at its snapshot, after them.
CREATE TABLE "ChatEventSeq" (
    "chatId" UUID NOT NULL,
    "seq" BIGINT NOT NULL,

    CONSTRAINT "ChatEventSeq_pkey" PRIMARY KEY ("chatId")
);
ALTER TABLE "ChatEventSeq" ADD CONSTRAINT "ChatEventSeq_chatId_fkey" FOREIGN KEY ("chatId") REFERENCES "Chat"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "ChatEventSeq" ("chatId", seq)
SELECT r."chatId", max(s.seq) FROM "RunEventSeq" s JOIN "Run" r ON r.id = s."runId" GROUP BY r."chatId";

ALTER TABLE "RunEvent" ADD COLUMN "chatId" UUID;
CREATE INDEX "RunEvent_chatId_seq_idx" ON "RunEvent"("chatId", "seq");

-- A turn queued behind its chat's head (a send with onActiveRun enqueue or interrupt) is a change
-- of the chat's queue its followers see: an event, though the run's status has not changed.
CREATE OR REPLACE FUNCTION run_event_append(run_id UUID, event_type TEXT, event_data JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  chat_id UUID;
  next_seq BIGINT;
BEGIN
  SELECT "chatId" INTO chat_id FROM "Run" WHERE id = run_id;
  INSERT INTO "ChatEventSeq" ("chatId", seq) VALUES (chat_id, 1)
  ON CONFLICT ("chatId") DO UPDATE SET seq = "ChatEventSeq".seq + 1
  RETURNING seq INTO next_seq;
  INSERT INTO "RunEventSeq" ("runId", seq) VALUES (run_id, next_seq)
  ON CONFLICT ("runId") DO UPDATE SET seq = EXCLUDED.seq;
  INSERT INTO "RunEvent" ("runId", seq, type, data, "chatId") VALUES (run_id, next_seq, event_type, event_data, chat_id);
  PERFORM pg_notify('run_events', run_id::text);
  PERFORM pg_notify('chat_events', chat_id::text);
END $$;

CREATE FUNCTION run_event_from_queued_run() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM run_event_append(NEW.id, 'queued',
    jsonb_build_object('status', NEW.status, 'messageId', NEW."messageId", 'metadata', NEW.metadata,
      'position', (SELECT count(*) FROM "Run" q
                    WHERE q."chatId" = NEW."chatId" AND q.status = 'QUEUED' AND q."queueSeq" IS NOT NULL
                      AND q."cancelRequestedAt" IS NULL AND q."queueSeq" <= NEW."queueSeq")));
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "Run_queued" AFTER INSERT ON "Run"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW."queueSeq" IS NOT NULL)
  EXECUTE FUNCTION run_event_from_queued_run();

-- A chat deleted ends the streams that follow it: they are told to look, and find it gone.
CREATE FUNCTION chat_deleted_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('chat_events', NEW.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "Chat_deleted_notify" AFTER UPDATE OF "deletedAt" ON "Chat"
  FOR EACH ROW WHEN (OLD."deletedAt" IS NULL AND NEW."deletedAt" IS NOT NULL)
  EXECUTE FUNCTION chat_deleted_notify();
