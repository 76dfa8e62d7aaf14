import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { CHAT_COLUMNS, type AttachmentRow, type ChatRow, type MessageRow } from '../schemas/chats';
import { decodeCursor } from '../schemas/common';

/**
 * The chats feature's SQL. Hand-written rather than Prisma: the list walks a composite keyset
 * index with a row comparison, which Prisma cannot express, and the rest share its column list.
 * Every statement is scoped to the caller's user, and a deleted chat is as if it did not exist.
 */

export async function insertChat(pool: Pool, userId: string, title: string): Promise<ChatRow> {
  const { rows } = await pool.query<ChatRow>(
    `INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, $3, now()) RETURNING ${CHAT_COLUMNS}`,
    [randomUUID(), userId, title],
  );
  return rows[0] as ChatRow;
}

/** `%`, `_` and `\` typed by the user match themselves, not any text. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** One page (plus one row telling whether another follows), newest activity first. */
export async function selectChats(
  pool: Pool,
  userId: string,
  query: { limit: number; cursor?: string; q?: string; favorite?: boolean },
): Promise<ChatRow[]> {
  const where = ['"userId" = $1', '"deletedAt" IS NULL'];
  const values: unknown[] = [userId];
  const bind = (value: unknown) => `$${values.push(value)}`;
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    // A row comparison walks the ("userId", "activityAt" DESC, id DESC) index directly.
    where.push(`("activityAt", id) < (${bind(after.at)}, ${bind(after.id)})`);
  }
  if (query.q !== undefined) where.push(`title ILIKE ${bind(likePattern(query.q))}`);
  if (query.favorite !== undefined) where.push(`"isFavorite" = ${bind(query.favorite)}`);
  const { rows } = await pool.query<ChatRow>(
    `SELECT ${CHAT_COLUMNS} FROM "Chat" WHERE ${where.join(' AND ')}
     ORDER BY "activityAt" DESC, id DESC LIMIT ${bind(query.limit + 1)}`,
    values,
  );
  return rows;
}

export async function selectChat(pool: Pool, userId: string, chatId: string): Promise<ChatRow | undefined> {
  const { rows } = await pool.query<ChatRow>(
    `SELECT ${CHAT_COLUMNS} FROM "Chat" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
    [chatId, userId],
  );
  return rows[0];
}

export async function patchChat(
  pool: Pool,
  userId: string,
  chatId: string,
  patch: { title?: string; isFavorite?: boolean; settings?: Record<string, unknown> },
): Promise<ChatRow | undefined> {
  // A setting given null is a default cleared: the merge writes the null, the strip removes it.
  const { rows } = await pool.query<ChatRow>(
    `UPDATE "Chat" SET title = COALESCE($3, title), "isFavorite" = COALESCE($4, "isFavorite"),
            "agentSettings" = jsonb_strip_nulls("agentSettings" || $5::jsonb), "updatedAt" = now()
      WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL
      RETURNING ${CHAT_COLUMNS}`,
    [chatId, userId, patch.title ?? null, patch.isFavorite ?? null, JSON.stringify(patch.settings ?? {})],
  );
  return rows[0];
}

/** Soft delete; false when there was no such chat of this user. */
export async function softDeleteChat(pool: Pool, userId: string, chatId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE "Chat" SET "deletedAt" = now(), "updatedAt" = now() WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
    [chatId, userId],
  );
  return rowCount === 1;
}

/** One page of a chat's messages, oldest first, with their attachments. */
export async function selectMessages(
  pool: Pool,
  chatId: string,
  query: { limit: number; cursor?: string; order: 'asc' | 'desc' },
): Promise<{ messages: MessageRow[]; attachments: (AttachmentRow & { messageId: string })[] }> {
  const values: unknown[] = [chatId, query.limit + 1];
  const desc = query.order === 'desc';
  let after = '';
  if (query.cursor) {
    const position = decodeCursor(query.cursor);
    values.push(position.at, position.id);
    after = `AND ("createdAt", id) ${desc ? '<' : '>'} ($3, $4)`;
  }
  const direction = desc ? 'DESC' : 'ASC';
  const { rows: messages } = await pool.query<MessageRow>(
    `SELECT id, "chatId", role, "runId", "contentBlocks", "createdAt" FROM "Message"
      WHERE "chatId" = $1 ${after} ORDER BY "createdAt" ${direction}, id ${direction} LIMIT $2`,
    values,
  );
  const { rows: attachments } = await pool.query<AttachmentRow & { messageId: string }>(
    `SELECT id, "messageId", filename, "mimeType", status, "storageKey" FROM "Attachment"
      WHERE "messageId" = ANY($1::uuid[]) ORDER BY "createdAt", id`,
    [messages.slice(0, query.limit).map((m) => m.id)],
  );
  return { messages, attachments };
}
