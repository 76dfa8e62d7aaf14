import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { CUTOFF } from '../db/retention';
import { CHAT_COLUMNS, type AttachmentRow, type ChatRow, type MessageRow } from '../schemas/chats';
import type { ChatSettings } from '../schemas/agent';
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

/**
 * Message `m` is not an answer that a later answer to the same user message replaced (a
 * regenerate); `upTo`, when given, bounds the later answers looked at (a fork's point). A scalar
 * subquery, not NOT EXISTS: the planner may turn NOT EXISTS into an anti join that hashes every
 * answer of every chat, where this is one probe of the index on "replyToId" per message read.
 */
export const NOT_SUPERSEDED = (m: string, upTo?: string) => `COALESCE(${SUPERSEDED_PROBE(m, upTo)}, true)`;

/** False when message `m` was replaced (see NOT_SUPERSEDED), null otherwise. */
export const SUPERSEDED_PROBE = (m: string, upTo?: string) => `(
  SELECT false FROM "Message" later
   WHERE later."replyToId" = ${m}."replyToId" AND (later."createdAt", later.id) > (${m}."createdAt", ${m}.id)
     ${upTo ? `AND (later."createdAt", later.id) <= ${upTo}` : ''}
   LIMIT 1)`;

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
    after = `AND (m."createdAt", m.id) ${desc ? '<' : '>'} ($3, $4)`;
  }
  const direction = desc ? 'DESC' : 'ASC';
  const { rows: messages } = await pool.query<MessageRow>(
    `SELECT m.id, m."chatId", m.role, m."runId", m."contentBlocks", m."replyToId", m."createdAt",
            -- The answer to the same message before this one, which this one replaced.
            (SELECT p.id FROM "Message" p
              WHERE p."replyToId" = m."replyToId" AND (p."createdAt", p.id) < (m."createdAt", m.id)
              ORDER BY p."createdAt" DESC, p.id DESC LIMIT 1) AS "regeneratedFrom"
       FROM "Message" m
      WHERE m."chatId" = $1 ${after} ORDER BY m."createdAt" ${direction}, m.id ${direction} LIMIT $2`,
    values,
  );
  const { rows: attachments } = await pool.query<AttachmentRow & { messageId: string }>(
    `SELECT id, "messageId", filename, "mimeType", status, "storageKey" FROM "Attachment"
      WHERE "messageId" = ANY($1::uuid[]) ORDER BY "createdAt", id`,
    [messages.slice(0, query.limit).map((m) => m.id)],
  );
  return { messages, attachments };
}

/** A message of a fork's source, as it is copied. */
export interface ForkedMessageRow {
  id: string;
  role: 'user' | 'assistant';
  contentBlocks: unknown[];
  replyToId: string | null;
  createdAt: string;
}

/** An attachment of a fork's source message, as it is copied (its size as text: a bigint). */
export interface ForkedAttachmentRow {
  id: string;
  messageId: string;
  storageKey: string;
  filename: string;
  mimeType: string;
  sizeBytes: string;
  status: string;
}

/**
 * What a fork at `messageId` copies: the caller's chat's messages up to and including it, oldest
 * first, without the answers a later answer (up to it) replaced, their attachments, and the chat's
 * settings (a fork goes on as its source would). Undefined
 * when the chat is not the caller's; `messages` empty when the chat has no such message.
 */
export async function selectForkSource(
  pool: Pool,
  scope: { userId: string; chatId: string; messageId: string },
): Promise<
  | {
      title: string;
      agentSettings: ChatSettings;
      messages: ForkedMessageRow[];
      attachments: ForkedAttachmentRow[];
    }
  | undefined
> {
  const { rows } = await pool.query<{
    title: string;
    agentSettings: ChatSettings;
    messages: ForkedMessageRow[];
    attachments: ForkedAttachmentRow[];
  }>(
    `WITH chat AS (
       SELECT id, title, "agentSettings" FROM "Chat" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL
     ), point AS (
       SELECT m."createdAt", m.id FROM "Message" m, chat WHERE m.id = $3 AND m."chatId" = chat.id
     ), copied AS (
       SELECT m.id, m.role, m."contentBlocks", m."replyToId", m."createdAt"
         FROM "Message" m, chat, point
        WHERE m."chatId" = chat.id AND (m."createdAt", m.id) <= (point."createdAt", point.id)
          AND ${NOT_SUPERSEDED('m', '(point."createdAt", point.id)')}
     )
     SELECT chat.title, chat."agentSettings",
            COALESCE((SELECT jsonb_agg(jsonb_build_object('id', c.id, 'role', c.role, 'contentBlocks', c."contentBlocks",
                                                          'replyToId', c."replyToId", 'createdAt', c."createdAt")
                                       ORDER BY c."createdAt", c.id) FROM copied c), '[]'::jsonb) AS messages,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('id', a.id, 'messageId', a."messageId",
                                                          'storageKey', a."storageKey", 'filename', a.filename,
                                                          'mimeType', a."mimeType", 'sizeBytes', a."sizeBytes"::text,
                                                          'status', a.status)
                                       ORDER BY a."createdAt", a.id)
                        FROM "Attachment" a JOIN copied c ON a."messageId" = c.id), '[]'::jsonb) AS attachments
       FROM chat`,
    [scope.chatId, scope.userId, scope.messageId],
  );
  return rows[0];
}

/**
 * Writes a fork in one statement: the chat, its copied messages (dated as their originals) and
 * their attachments, rows of their own naming the same storage keys: the stored bytes, and the
 * user's "StoredFile" records of them, are shared, not copied. The chat counts as active now.
 */
export async function insertFork(
  pool: Pool,
  fork: {
    chatId: string;
    userId: string;
    title: string;
    agentSettings: ChatSettings;
    messages: readonly ForkedMessageRow[];
    attachments: readonly ForkedAttachmentRow[];
  },
): Promise<ChatRow> {
  const last = fork.messages[fork.messages.length - 1];
  const { rows } = await pool.query<ChatRow>(
    `WITH chat AS (
       INSERT INTO "Chat" (id, "userId", title, "lastMessageAt", "lastMessageId", "agentSettings", "activityAt", "updatedAt")
       VALUES ($1, $2, $3, $4, $5, $8, now(), now())
       RETURNING ${CHAT_COLUMNS}
     ), messages AS (
       INSERT INTO "Message" (id, "chatId", role, "contentBlocks", "replyToId", "createdAt")
       SELECT m.id, $1, m.role::"MessageRole", m."contentBlocks", m."replyToId", m."createdAt"
         FROM jsonb_to_recordset($6::jsonb) AS m(id uuid, role text, "contentBlocks" jsonb, "replyToId" uuid,
                                                "createdAt" timestamptz)
     ), attachments AS (
       INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes", status)
       SELECT a.id, $2, $1, a."messageId", a."storageKey", a.filename, a."mimeType", a."sizeBytes", a.status
         FROM jsonb_to_recordset($7::jsonb) AS a(id uuid, "messageId" uuid, "storageKey" text, filename text,
                                                "mimeType" text, "sizeBytes" bigint, status text)
     )
     SELECT * FROM chat`,
    [
      fork.chatId,
      fork.userId,
      fork.title,
      last?.createdAt ?? null,
      last?.id ?? null,
      JSON.stringify(fork.messages),
      JSON.stringify(fork.attachments),
      JSON.stringify(fork.agentSettings),
    ],
  );
  return rows[0] as ChatRow;
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
  // A file another chat's attachment still names (a fork's) stays: only its last row takes it.
  const attachments = await client.query<{ rows: number; keys: string[] }>(
    `WITH gone AS (
       DELETE FROM "Attachment" WHERE id = ANY(ARRAY(SELECT id FROM "Attachment" WHERE "chatId" = $1 LIMIT $2))
       RETURNING "storageKey"
     )
     SELECT (SELECT count(*) FROM gone)::int AS rows,
            ARRAY(SELECT DISTINCT g."storageKey" FROM gone g
                   WHERE NOT EXISTS (SELECT 1 FROM "Attachment" a
                                      WHERE a."storageKey" = g."storageKey" AND a."chatId" IS DISTINCT FROM $1)) AS keys`,
    [chatId, batch],
  );
  const step = attachments.rows[0];
  if (step?.rows) return step;
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
    // The files its tools made, named before the calls go with their runs; not one a fork's
    // attachment still names (this chat's attachments are gone by now).
    const files = await client.query<{ key: string }>(
      `SELECT 'tools/' || t."userId" || '/' || t.id || '/' || (asset->>'filename') AS key
         FROM "ToolCall" t, jsonb_array_elements(COALESCE(t.result->'assets', '[]'::jsonb)) asset
        WHERE t."runId" = ANY($1::uuid[]) AND asset->>'filename' IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM "Attachment" a
                           WHERE a."storageKey" = 'tools/' || t."userId" || '/' || t.id || '/' || (asset->>'filename'))`,
      [ids],
    );
    const gone = await client.query(`DELETE FROM "Run" WHERE id = ANY($1::uuid[])`, [ids]);
    return { rows: gone.rowCount ?? 0, keys: files.rows.map((r) => r.key) };
  }
  const chat = await client.query(`DELETE FROM "Chat" WHERE id = $1`, [chatId]);
  return { rows: chat.rowCount ?? 0, keys: [] };
}
