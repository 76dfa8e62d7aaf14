import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { CUTOFF } from '../db/retention';
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
  // A literal, not a parameter: the planner matches the favourites' partial index only to it.
  if (query.favorite !== undefined) where.push(query.favorite ? '"isFavorite"' : 'NOT "isFavorite"');
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
  patch: { title?: string; isFavorite?: boolean },
): Promise<ChatRow | undefined> {
  const { rows } = await pool.query<ChatRow>(
    `UPDATE "Chat" SET title = COALESCE($3, title), "isFavorite" = COALESCE($4, "isFavorite"), "updatedAt" = now()
      WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL
      RETURNING ${CHAT_COLUMNS}`,
    [chatId, userId, patch.title ?? null, patch.isFavorite ?? null],
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

/**
 * What one step of purging soft-deleted chats deleted: rows (0 when no chat is past its grace),
 * and the storage keys of the files that went with them, for the caller to delete before it
 * commits.
 */
export interface PurgeStep {
  rows: number;
  keys: string[];
}

/**
 * One bounded step of purging the chat deleted longest ago, once `graceMs` have passed and no run
 * of it is still active: its attachments (and their files), then its messages, then its runs (with
 * their events, tool calls and the calls' charges, waitpoints, and the files the tools made), a
 * batch at a time, children first so no step cascades into more than its batch; then the chat.
 * Run inside the caller's transaction.
 */
export async function purgeDeletedChatStep(
  client: PoolClient,
  graceMs: number,
  batch: number,
): Promise<PurgeStep> {
  const { rows: due } = await client.query<{ id: string }>(
    `SELECT id FROM "Chat" c
      WHERE "deletedAt" < ${CUTOFF}
        AND NOT EXISTS (SELECT 1 FROM "Run" r WHERE r."chatId" = c.id AND r.status IN ('QUEUED', 'RUNNING', 'WAITING'))
      ORDER BY "deletedAt" LIMIT 1
      FOR UPDATE SKIP LOCKED`,
    [graceMs],
  );
  const chatId = due[0]?.id;
  if (!chatId) return { rows: 0, keys: [] };
  const attachments = await client.query<{ key: string }>(
    `DELETE FROM "Attachment" WHERE id = ANY(ARRAY(SELECT id FROM "Attachment" WHERE "chatId" = $1 LIMIT $2))
     RETURNING "storageKey" AS key`,
    [chatId, batch],
  );
  if (attachments.rowCount) return { rows: attachments.rowCount, keys: attachments.rows.map((r) => r.key) };
  const messages = await client.query(
    `DELETE FROM "Message" WHERE id = ANY(ARRAY(SELECT id FROM "Message" WHERE "chatId" = $1 LIMIT $2))`,
    [chatId, batch],
  );
  if (messages.rowCount) return { rows: messages.rowCount, keys: [] };
  const { rows: runs } = await client.query<{ id: string }>(
    `SELECT id FROM "Run" WHERE "chatId" = $1 LIMIT $2`,
    [chatId, batch],
  );
  if (runs.length) {
    const ids = runs.map((r) => r.id);
    // The files its tools made, named before the calls go with their runs.
    const files = await client.query<{ key: string }>(
      `SELECT 'tools/' || t."userId" || '/' || t.id || '/' || (asset->>'filename') AS key
         FROM "ToolCall" t, jsonb_array_elements(COALESCE(t.result->'assets', '[]'::jsonb)) asset
        WHERE t."runId" = ANY($1::uuid[]) AND asset->>'filename' IS NOT NULL`,
      [ids],
    );
    const gone = await client.query(`DELETE FROM "Run" WHERE id = ANY($1::uuid[])`, [ids]);
    return { rows: gone.rowCount ?? 0, keys: files.rows.map((r) => r.key) };
  }
  const chat = await client.query(`DELETE FROM "Chat" WHERE id = $1`, [chatId]);
  return { rows: chat.rowCount ?? 0, keys: [] };
}
