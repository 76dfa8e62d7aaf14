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
import { refreshContentBlocks } from '../core/storage/signing';
import type { Caller, OperationDeps } from './deps';
import type { RunsOperations } from './runs';
import { heldOpen, type Streams } from './streams';
import { wakeUps } from './wake-ups';

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

const chatNotFound = () => new NotFoundError('CHAT_NOT_FOUND', 'No such chat.');

/** How many of a chat's latest messages its resource (MCP `chat://{chatId}`) shows. */
const RESOURCE_MESSAGES = 50;
/**
 * How often a chat's watch looks at the chat's row. No notification announces a chat's change: a
 * send's admission would have to NOTIFY, and PostgreSQL orders every notifying commit behind one
 * lock, which a send under load must not wait on.
 */
const WATCH_INTERVAL_MS = 250;

/** A chat and its latest messages, oldest first: what the MCP resource `chat://{chatId}` shows. */
export interface ChatResource {
  chat: ChatDto;
  messages: MessageDto[];
}

/** Chats and their messages, as every transport (REST, MCP, the console) sees them. */
export function createChatsOperations(
  deps: OperationDeps,
  runs: Pick<RunsOperations, 'cancelActiveRunOfChat'>,
  streams: Streams,
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
      return messagesOf(caller, await findChat(caller, chatId), query);
    },

    /** The chat's resource: the chat, and its latest RESOURCE_MESSAGES messages, oldest first. */
    async chatResource(caller: Caller, chatId: string): Promise<ChatResource> {
      return resourceOf(caller, await findChat(caller, chatId));
    },

    /**
     * The chat's resource now, and again each time it changed, until `signal` aborts (see
     * watchChat). One of the caller's open streams and waits while it lasts (429 ACTIVE_LIMIT past
     * them; a 401 when the credential it was opened with ends).
     */
    watchChat(caller: Caller, chatId: string, signal: AbortSignal): AsyncGenerator<ChatResource> {
      return heldOpen(streams, caller, signal, (held) => watchChat(caller, chatId, held));
    },
  };

  /**
   * Every change of what a chat's resource shows (a message, the title, the star) changes the
   * chat's row (a message its `lastMessageId`, and each its `updatedAt`), so between changes a
   * watch costs one read of that row every WATCH_INTERVAL_MS, and the messages are read only when
   * it changed (and every STREAM_HEARTBEAT_INTERVAL, as insurance). A chat deleted meanwhile ends
   * the watch with CHAT_NOT_FOUND.
   */
  async function* watchChat(
    caller: Caller,
    chatId: string,
    signal: AbortSignal,
  ): AsyncGenerator<ChatResource> {
    const wakes = wakeUps(signal);
    let chat = await findChat(caller, chatId);
    while (!signal.aborted) {
      yield await resourceOf(caller, chat);
      // The whole row, not `updatedAt` alone: two changes that began in one millisecond share it.
      const seen = JSON.stringify(toChatDto(chat));
      const readAgainAt = Date.now() + deps.config.STREAM_HEARTBEAT_INTERVAL;
      do {
        if (!(await wakes.wait(WATCH_INTERVAL_MS))) return;
        chat = await findChat(caller, chatId);
      } while (JSON.stringify(toChatDto(chat)) === seen && Date.now() < readAgainAt);
    }
  }

  async function resourceOf(caller: Caller, chat: ChatRow): Promise<ChatResource> {
    const latest = await messagesOf(caller, chat, { limit: RESOURCE_MESSAGES, order: 'desc' });
    // The latest, shown oldest first as get_messages pages them.
    return { chat: toChatDto(chat), messages: latest.data.toReversed() };
  }

  async function messagesOf(
    caller: Caller,
    chat: ChatRow,
    query: MessageListQuery,
  ): Promise<Page<MessageDto>> {
    const { messages, attachments } = await selectMessages(pool, chat.id, query);
    const result = page(messages, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
    const byMessage = new Map<string, AttachmentRow[]>();
    for (const a of attachments) byMessage.set(a.messageId, [...(byMessage.get(a.messageId) ?? []), a]);
    return {
      data: result.data.map((m) => {
        const dto = toMessageDto(deps.storage, m, byMessage.get(m.id) ?? []);
        const contentBlocks = refreshContentBlocks(deps.config, dto.contentBlocks, caller.userId);
        return contentBlocks === dto.contentBlocks ? dto : { ...dto, contentBlocks };
      }),
      nextCursor: result.nextCursor,
    };
  }
}

export type ChatsOperations = ReturnType<typeof createChatsOperations>;
