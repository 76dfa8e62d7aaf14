-- The step's history read (chat_history, migration chat_history_read) also leaves out the turns
-- still waiting in the chat's queue (migration run_queue): they are not said yet. A queued turn's
-- message can come before the running turn's own only when that turn interrupted the chat (it
-- starts ahead of the turns queued before it), and then the model must not read them. The probe
-- names the chat's queue index, empty in most chats; the function's settings keep the walk down
-- the message index as before.
CREATE OR REPLACE FUNCTION chat_history(
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
                            LIMIT 1),
                          (SELECT false FROM "Run" q
                            WHERE q."chatId" = m."chatId" AND q.status = 'QUEUED'
                              AND q."queueSeq" IS NOT NULL AND q.id = m."runId"),
                          true)
           ORDER BY m."createdAt" DESC, m.id DESC
           LIMIT max_rows + 1) h
$$;
