import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

/**
 * A chat of `messages` stored messages of the user's, user and assistant in turn (each answer
 * naming the message it answers), a second apart and all in the past, written by one set-based statement: the long chats the history read and
 * the compaction are tested and measured on. Each text is about `textLength` characters.
 */
export async function fillLongChat(
  pool: Pool,
  input: { userId: string; messages: number; textLength?: number },
): Promise<{ chatId: string }> {
  const chatId = randomUUID();
  const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((input.textLength ?? 80) / 27));
  await pool.query(
    `WITH chat AS (
       INSERT INTO "Chat" (id, "userId", title, "lastMessageAt", "activityAt", "updatedAt")
       VALUES ($1, $2, 'A long chat', now(), now(), now())
       RETURNING id
     ), numbered AS (
       SELECT n, gen_random_uuid() AS id FROM generate_series(0, $3 - 1) AS n
     )
     INSERT INTO "Message" (id, "chatId", role, "replyToId", "contentBlocks", "createdAt")
     SELECT m.id, chat.id,
            CASE WHEN m.n % 2 = 0 THEN 'user' ELSE 'assistant' END::"MessageRole",
            CASE WHEN m.n % 2 = 1 THEN lag(m.id) OVER (ORDER BY m.n) END,
            jsonb_build_array(jsonb_build_object('type', 'text',
              'text', 'message ' || m.n || ': ' || left($4, $5))),
            now() - make_interval(secs => $3 - m.n + 60)
       FROM chat, numbered m`,
    [chatId, input.userId, input.messages, filler, input.textLength ?? 80],
  );
  return { chatId };
}
