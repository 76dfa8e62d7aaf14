-- A blocking tool route answers when the call's row records its success, not after its workflow
-- task completes and Temporal's long poll of the history wakes the gateway: about 10 ms of a crop.
-- Only direct calls (no run) notify: no gateway waits on a run's tool call.
CREATE FUNCTION tool_call_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tool_calls', NEW.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "ToolCall_succeeded" AFTER UPDATE OF status ON "ToolCall"
  FOR EACH ROW WHEN (OLD.status = 'RUNNING' AND NEW.status = 'SUCCEEDED' AND NEW."runId" IS NULL)
  EXECUTE FUNCTION tool_call_notify();
