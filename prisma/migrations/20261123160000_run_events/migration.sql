-- The live stream of a run (GET …/runs/{runId}/events): every change a client follows (text,
-- status, tool calls, waitpoints) is recorded as a numbered event, by triggers, so no statement
-- that changes a run can forget to announce it.
--
-- Event numbers are per run and follow commit order, so `Last-Event-ID` resumes without a gap:
-- they are taken at commit (deferred triggers) from a counter row of their own. Taking them from
-- the Run row, or before commit, would order a tool call's finish (ToolCall lock, then Run)
-- against a run's ending (Run lock, then ToolCall) into a deadlock.
CREATE TABLE "RunEventSeq" (
    "runId" UUID NOT NULL,
    "seq" BIGINT NOT NULL,

    CONSTRAINT "RunEventSeq_pkey" PRIMARY KEY ("runId")
);

CREATE TABLE "RunEvent" (
    "runId" UUID NOT NULL,
    "seq" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunEvent_pkey" PRIMARY KEY ("runId", "seq")
);

ALTER TABLE "RunEventSeq" ADD CONSTRAINT "RunEventSeq_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "RunEvent" ADD CONSTRAINT "RunEvent_runId_fkey" FOREIGN KEY ("runId") REFERENCES "Run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Appends one event to its run and wakes the gateways that stream it (NOTIFY is sent at commit).
CREATE FUNCTION run_event_append(run_id UUID, event_type TEXT, event_data JSONB) RETURNS VOID
LANGUAGE plpgsql AS $$
DECLARE
  next_seq BIGINT;
BEGIN
  INSERT INTO "RunEventSeq" ("runId", seq) VALUES (run_id, 1)
  ON CONFLICT ("runId") DO UPDATE SET seq = "RunEventSeq".seq + 1
  RETURNING seq INTO next_seq;
  INSERT INTO "RunEvent" ("runId", seq, type, data) VALUES (run_id, next_seq, event_type, event_data);
  PERFORM pg_notify('run_events', run_id::text);
END $$;

CREATE FUNCTION run_event_from_run() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.text IS DISTINCT FROM OLD.text THEN
    -- Streamed text grows: the event carries what was added. A step retried from its start
    -- rewrites it: the event carries the whole text and says it replaces what came before.
    IF left(NEW.text, length(OLD.text)) = OLD.text THEN
      PERFORM run_event_append(NEW.id, 'text.delta',
        jsonb_build_object('text', substr(NEW.text, length(OLD.text) + 1)));
    ELSE
      PERFORM run_event_append(NEW.id, 'text.delta', jsonb_build_object('text', NEW.text, 'replace', true));
    END IF;
  END IF;
  IF NEW.status IS DISTINCT FROM OLD.status THEN
    PERFORM run_event_append(NEW.id, 'status',
      jsonb_strip_nulls(jsonb_build_object('status', NEW.status, 'error', NEW.error)));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION run_event_from_tool_call() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM run_event_append(NEW."runId",
    CASE WHEN TG_OP = 'INSERT' THEN 'tool.started' ELSE 'tool.finished' END,
    to_jsonb(NEW) - 'userId' - 'chatId' - 'providerRunId' - 'creditCost');
  RETURN NULL;
END $$;

CREATE FUNCTION run_event_from_waitpoint() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM run_event_append(NEW."runId",
    CASE WHEN TG_OP = 'INSERT' THEN 'waitpoint.opened' ELSE 'waitpoint.resolved' END,
    -- The row as the snapshot maps it; the model reply behind the plan is internal.
    to_jsonb(NEW) - 'reply');
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "Run_events" AFTER UPDATE ON "Run"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.text IS DISTINCT FROM OLD.text OR NEW.status IS DISTINCT FROM OLD.status)
  EXECUTE FUNCTION run_event_from_run();

CREATE CONSTRAINT TRIGGER "ToolCall_started" AFTER INSERT ON "ToolCall"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW."runId" IS NOT NULL)
  EXECUTE FUNCTION run_event_from_tool_call();

CREATE CONSTRAINT TRIGGER "ToolCall_finished" AFTER UPDATE ON "ToolCall"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW."runId" IS NOT NULL AND NEW.status IS DISTINCT FROM OLD.status)
  EXECUTE FUNCTION run_event_from_tool_call();

CREATE CONSTRAINT TRIGGER "Waitpoint_opened" AFTER INSERT ON "Waitpoint"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  EXECUTE FUNCTION run_event_from_waitpoint();

CREATE CONSTRAINT TRIGGER "Waitpoint_resolved" AFTER UPDATE ON "Waitpoint"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.status IS DISTINCT FROM OLD.status)
  EXECUTE FUNCTION run_event_from_waitpoint();
