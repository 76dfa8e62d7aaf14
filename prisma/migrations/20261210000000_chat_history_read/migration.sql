-- What a model step reads of its chat (core/runs/store.ts, historySql): the messages after the
-- summary's last up to and including the run's own, the newest `max_rows` of them and one more
-- (which only says the read stopped short), oldest first; an answer a later answer to the same
-- message replaced (a regenerate) is left out, as NOT_SUPERSEDED in core/chats/store.ts says.
--
-- The read must touch those rows and no others, under the run's lock, however long the chat. The
-- planner cannot know this chat's length: it estimates from the average chat, and where most chats
-- are short it would rather collect the whole chat through a bitmap and sort it, reading thousands
-- of rows of a long chat to keep a few dozen. The ordered walk down the index on
-- (chatId, createdAt, id) is the only plan this read wants, so the function asks for it and turns
-- the others off, for its own statement alone (a function's SET applies to its body).
CREATE FUNCTION chat_history(
  chat_id UUID,
  through_at TIMESTAMPTZ(3),
  through_id UUID,
  after_at TIMESTAMPTZ(3),
  after_id UUID,
  max_rows INTEGER
) RETURNS JSONB
LANGUAGE sql STABLE
SET enable_indexscan = on
SET enable_bitmapscan = off
SET enable_seqscan = off
AS $$
  SELECT COALESCE(jsonb_agg(jsonb_build_object('id', h.id, 'createdAt', h."createdAt", 'role', h.role,
                                               'contentBlocks', h."contentBlocks")
                            ORDER BY h."createdAt", h.id), '[]'::jsonb)
    FROM (SELECT m.id, m."createdAt", m.role, m."contentBlocks" FROM "Message" m
           WHERE m."chatId" = chat_id
             AND (m."createdAt", m.id) <= (through_at, through_id)
             AND (m."createdAt", m.id) > (after_at, after_id)
             AND COALESCE((SELECT false FROM "Message" later
                            WHERE later."replyToId" = m."replyToId"
                              AND (later."createdAt", later.id) > (m."createdAt", m.id)
                            LIMIT 1), true)
           ORDER BY m."createdAt" DESC, m.id DESC
           LIMIT max_rows + 1) h
$$;
