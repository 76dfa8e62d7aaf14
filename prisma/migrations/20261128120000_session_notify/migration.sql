-- A live stream opened in the console ends when the session it was opened with does, as the
-- session's next request would be refused: signed out, signed out everywhere, or the user deleted
-- (every such end deletes the row). Without it a stream of a run waiting on its plan went on for
-- up to a day after the person signed out. A session's expiry needs no notification: the stream
-- reads it once and ends on time (operations/runs/events.ts).
CREATE FUNCTION session_notify() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('sessions', OLD.id::text);
  RETURN NULL;
END $$;

CREATE TRIGGER "Session_deleted" AFTER DELETE ON "Session"
  FOR EACH ROW EXECUTE FUNCTION session_notify();
