import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { NotFoundError } from '../../../core/errors/app-error';
import {
  CHAT_COLUMNS,
  DEFAULT_CHAT_TITLE,
  chatListSchema,
  chatSchema,
  createChatSchema,
  messageListSchema,
  toChatDto,
  toMessageDto,
  updateChatSchema,
  type AttachmentRow,
  type ChatRow,
  type MessageRow,
} from '../../../core/schemas/chats';
import {
  NO_NUL,
  NO_NUL_MESSAGE,
  cursorQuery,
  decodeCursor,
  limitQuery,
  page,
} from '../../../core/schemas/common';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';
import { cancelActiveRunOfChat } from '../runs/control';

const chatParams = z.object({ chatId: z.uuid() });
const chatNotFound = () => new NotFoundError('CHAT_NOT_FOUND', 'No such chat.');

/** `%`, `_` and `\` typed by the user match themselves, not any text. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function registerChatsRoutes(routes: RouteTable, deps: GatewayDeps): void {
  const { pool } = deps.db;

  /** The caller's chat, unless deleted; anyone else's is indistinguishable from none. */
  async function findChat(userId: string, chatId: string): Promise<ChatRow> {
    const { rows } = await pool.query<ChatRow>(
      `SELECT ${CHAT_COLUMNS} FROM "Chat" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
      [chatId, userId],
    );
    const chat = rows[0];
    if (!chat) throw chatNotFound();
    return chat;
  }

  routes.add({
    method: 'post',
    path: '/api/v1/chats',
    operationId: 'createChat',
    summary: 'Create an empty chat',
    tag: 'Chats',
    auth: 'apiKey',
    request: { body: createChatSchema },
    responses: { 201: { description: 'Chat created', schema: chatSchema } },
    errors: ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ body }, req) => {
      const { rows } = await pool.query<ChatRow>(
        `INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, $3, now())
         RETURNING ${CHAT_COLUMNS}`,
        [randomUUID(), currentAuth(req).userId, body.title ?? DEFAULT_CHAT_TITLE],
      );
      return { status: 201, body: toChatDto(rows[0] as ChatRow) };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats',
    operationId: 'listChats',
    summary: 'List chats, newest activity first',
    tag: 'Chats',
    auth: 'apiKey',
    request: {
      query: z.object({
        limit: limitQuery(50, 20),
        cursor: cursorQuery,
        q: z
          .string()
          .min(1)
          .max(120)
          .regex(NO_NUL, NO_NUL_MESSAGE)
          .optional()
          .openapi({ description: 'Case-insensitive title search.' }),
        favorite: z
          .enum(['true', 'false'])
          .optional()
          .transform((v) => (v === undefined ? undefined : v === 'true'))
          .openapi({
            type: 'string',
            enum: ['true', 'false'],
            description: 'Only favorites, or only others.',
          }),
      }),
    },
    responses: { 200: { description: 'One page of chats', schema: chatListSchema } },
    errors: [],
    handler: async ({ query }, req) => {
      const where = ['"userId" = $1', '"deletedAt" IS NULL'];
      const values: unknown[] = [currentAuth(req).userId];
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
      const result = page(rows, query.limit, (row) => ({ at: row.activityAt, id: row.id }));
      return { status: 200, body: { data: result.data.map(toChatDto), nextCursor: result.nextCursor } };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId',
    operationId: 'getChat',
    summary: 'Get one chat',
    tag: 'Chats',
    auth: 'apiKey',
    request: { params: chatParams },
    responses: { 200: { description: 'The chat', schema: chatSchema } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params }, req) => ({
      status: 200,
      body: toChatDto(await findChat(currentAuth(req).userId, params.chatId)),
    }),
  });

  routes.add({
    method: 'patch',
    path: '/api/v1/chats/:chatId',
    operationId: 'updateChat',
    summary: 'Rename a chat or mark it favorite',
    tag: 'Chats',
    auth: 'apiKey',
    extension: true,
    request: { params: chatParams, body: updateChatSchema },
    responses: { 200: { description: 'The updated chat', schema: chatSchema } },
    errors: ['CHAT_NOT_FOUND', 'INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ params, body }, req) => {
      const { rows } = await pool.query<ChatRow>(
        `UPDATE "Chat" SET title = COALESCE($3, title), "isFavorite" = COALESCE($4, "isFavorite"),
           "updatedAt" = now()
         WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL
         RETURNING ${CHAT_COLUMNS}`,
        [params.chatId, currentAuth(req).userId, body.title ?? null, body.isFavorite ?? null],
      );
      const chat = rows[0];
      if (!chat) throw chatNotFound();
      return { status: 200, body: toChatDto(chat) };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/v1/chats/:chatId',
    operationId: 'deleteChat',
    summary: 'Delete a chat (soft delete); it disappears from every route',
    tag: 'Chats',
    auth: 'apiKey',
    request: { params: chatParams },
    responses: { 204: { description: 'Deleted' } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params }, req) => {
      const { rowCount } = await pool.query(
        `UPDATE "Chat" SET "deletedAt" = now(), "updatedAt" = now()
         WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
        [params.chatId, currentAuth(req).userId],
      );
      if (!rowCount) throw chatNotFound();
      await cancelActiveRunOfChat(deps, params.chatId);
      return { status: 204 };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/chats/:chatId/messages',
    operationId: 'listMessages',
    summary: 'List the messages of a chat, oldest first',
    tag: 'Chats',
    auth: 'apiKey',
    request: {
      params: chatParams,
      query: z.object({ limit: limitQuery(100, 50), cursor: cursorQuery }),
    },
    responses: { 200: { description: 'One page of messages', schema: messageListSchema } },
    errors: ['CHAT_NOT_FOUND'],
    handler: async ({ params, query }, req) => {
      const chat = await findChat(currentAuth(req).userId, params.chatId);
      const values: unknown[] = [chat.id, query.limit + 1];
      let after = '';
      if (query.cursor) {
        const position = decodeCursor(query.cursor);
        values.push(position.at, position.id);
        after = 'AND ("createdAt", id) > ($3, $4)';
      }
      const { rows } = await pool.query<MessageRow>(
        `SELECT id, "chatId", role, "runId", "contentBlocks", "createdAt" FROM "Message"
         WHERE "chatId" = $1 ${after} ORDER BY "createdAt", id LIMIT $2`,
        values,
      );
      const result = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      const attachments = await pool.query<AttachmentRow & { messageId: string }>(
        `SELECT id, "messageId", filename, "mimeType", status, "storageKey" FROM "Attachment"
         WHERE "messageId" = ANY($1::uuid[]) ORDER BY "createdAt", id`,
        [result.data.map((m) => m.id)],
      );
      const byMessage = new Map<string, AttachmentRow[]>();
      for (const a of attachments.rows)
        byMessage.set(a.messageId, [...(byMessage.get(a.messageId) ?? []), a]);
      return {
        status: 200,
        body: {
          data: result.data.map((m) => toMessageDto(deps.storage, m, byMessage.get(m.id) ?? [])),
          nextCursor: result.nextCursor,
        },
      };
    },
  });
}
