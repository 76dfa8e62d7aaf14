-- A run's model step is a local activity of its workflow task (workflows-v6), which Temporal's own
-- cancel reaches only at the task's next beat, seconds later: the worker running the step listens
-- here instead, and stops the model call at the commit that records the cancel (a cancel of the
-- run, or of the chat's active run when the chat is deleted).
CREATE FUNCTION run_cancel_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('run_cancels', NEW.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "Run_cancel_requested" AFTER UPDATE OF "cancelRequestedAt" ON "Run"
  FOR EACH ROW WHEN (OLD."cancelRequestedAt" IS NULL AND NEW."cancelRequestedAt" IS NOT NULL)
  EXECUTE FUNCTION run_cancel_notify();
