import {
  insertChat,
  patchChat,
  selectChat,
  selectChats,
  selectMessages,
  softDeleteChat,
} from '../core/chats/store';
import { NotFoundError } from '../core/errors/app-error';
import {
  DEFAULT_CHAT_TITLE,
  toChatDto,
  toMessageDto,
  type AttachmentRow,
  type ChatDto,
  type ChatListQuery,
  type ChatRow,
  type MessageDto,
  type MessageListQuery,
} from '../core/schemas/chats';
import { page } from '../core/schemas/common';
import { refreshFileUrls } from '../core/storage/signing';
import type { Caller, OperationDeps } from './deps';
import type { RunsOperations } from './runs';

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

const chatNotFound = () => new NotFoundError('CHAT_NOT_FOUND', 'No such chat.');

/** Chats and their messages, as every transport (REST, MCP, the console) sees them. */
export function createChatsOperations(
  deps: OperationDeps,
  runs: Pick<RunsOperations, 'cancelActiveRunOfChat'>,
) {
  const { pool } = deps.db;

  /** The caller's chat, unless deleted; anyone else's is indistinguishable from none. */
  async function findChat(caller: Caller, chatId: string): Promise<ChatRow> {
    const chat = await selectChat(pool, caller.userId, chatId);
    if (!chat) throw chatNotFound();
    return chat;
  }

  return {
    async createChat(caller: Caller, input: { title?: string }): Promise<ChatDto> {
      return toChatDto(await insertChat(pool, caller.userId, input.title ?? DEFAULT_CHAT_TITLE));
    },

    async listChats(caller: Caller, query: ChatListQuery): Promise<Page<ChatDto>> {
      const rows = await selectChats(pool, caller.userId, query);
      const result = page(rows, query.limit, (row) => ({ at: row.activityAt, id: row.id }));
      return { data: result.data.map(toChatDto), nextCursor: result.nextCursor };
    },

    async getChat(caller: Caller, chatId: string): Promise<ChatDto> {
      return toChatDto(await findChat(caller, chatId));
    },

    async updateChat(
      caller: Caller,
      chatId: string,
      patch: { title?: string; isFavorite?: boolean },
    ): Promise<ChatDto> {
      const chat = await patchChat(pool, caller.userId, chatId, patch);
      if (!chat) throw chatNotFound();
      return toChatDto(chat);
    },

    /** Soft-deletes the chat, which disappears from every route, and cancels its active run. */
    async deleteChat(caller: Caller, chatId: string): Promise<void> {
      if (!(await softDeleteChat(pool, caller.userId, chatId))) throw chatNotFound();
      await runs.cancelActiveRunOfChat(chatId);
    },

    async listMessages(caller: Caller, chatId: string, query: MessageListQuery): Promise<Page<MessageDto>> {
      const chat = await findChat(caller, chatId);
      const { messages, attachments } = await selectMessages(pool, chat.id, query);
      const result = page(messages, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      const byMessage = new Map<string, AttachmentRow[]>();
      for (const a of attachments) byMessage.set(a.messageId, [...(byMessage.get(a.messageId) ?? []), a]);
      return {
        data: result.data.map((m) =>
          refreshFileUrls(deps.config, toMessageDto(deps.storage, m, byMessage.get(m.id) ?? [])),
        ),
        nextCursor: result.nextCursor,
      };
    },
  };
}

export type ChatsOperations = ReturnType<typeof createChatsOperations>;
