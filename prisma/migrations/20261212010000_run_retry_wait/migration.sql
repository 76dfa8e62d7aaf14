-- Why a running run is not moving, beyond its plan and its queue (issue 49): its model step waits
-- out a provider's retry (a rate limit's `retry-after`, or the backoff after a 5xx or a cut
-- stream), or its tool call waits for one of the user's tool-call slots. The activity that failed
-- writes what it waits for, and its next attempt clears it; each change is an event of the run's
-- stream ('waiting'), so a follower sees the wait begin and end.
ALTER TABLE "Run" ADD COLUMN "retryWait" JSONB;

CREATE OR REPLACE FUNCTION run_event_from_run() RETURNS TRIGGER
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
  IF NEW."retryWait" IS DISTINCT FROM OLD."retryWait" THEN
    PERFORM run_event_append(NEW.id, 'waiting', jsonb_build_object('waitingFor', NEW."retryWait"));
  END IF;
  IF NEW.status IS DISTINCT FROM OLD.status THEN
    PERFORM run_event_append(NEW.id, 'status',
      jsonb_strip_nulls(jsonb_build_object('status', NEW.status, 'error', NEW.error)));
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER "Run_events" ON "Run";
CREATE CONSTRAINT TRIGGER "Run_events" AFTER UPDATE ON "Run"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.text IS DISTINCT FROM OLD.text OR NEW.status IS DISTINCT FROM OLD.status
        OR NEW."retryWait" IS DISTINCT FROM OLD."retryWait")
  EXECUTE FUNCTION run_event_from_run();
