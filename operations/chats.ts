import { randomUUID } from 'node:crypto';
import {
  insertChat,
  insertFork,
  patchChat,
  selectChat,
  selectChats,
  selectForkSource,
  selectMessages,
  softDeleteChat,
  type ForkedAttachmentRow,
  type ForkedMessageRow,
} from '../core/chats/store';
import { AppError, NotFoundError } from '../core/errors/app-error';
import {
  DEFAULT_CHAT_TITLE,
  toChatDto,
  toMessageDto,
  type AttachmentRow,
  type ChatDto,
  type ChatListQuery,
  type ChatRow,
  type ChatUpdate,
  type ForkChatInput,
  type MessageDto,
  type MessageListQuery,
} from '../core/schemas/chats';
import { page } from '../core/schemas/common';
import { refreshContentBlocks } from '../core/storage/signing';
import type { Caller, OperationDeps } from './deps';
import type { RunsOperations } from './runs';
import { heldOpen, type Streams } from './streams';
import { wakeUps } from './wake-ups';
import { assertOffered } from './runs/admission';

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

    /**
     * Changes a chat's title, star and its runs' default settings (a null clears a default); a model
     * not offered or more steps than the cap is refused naming the field, and nothing is written.
     */
    async updateChat(caller: Caller, chatId: string, patch: ChatUpdate): Promise<ChatDto> {
      const { title, isFavorite, ...settings } = patch;
      assertOffered(deps.config, settings);
      const chat = await patchChat(pool, caller.userId, chatId, { title, isFavorite, settings });
      if (!chat) throw chatNotFound();
      return toChatDto(chat);
    },

    /**
     * A new chat holding the caller's chat's history up to and including one of its messages (see
     * forkCopies); 404 CHAT_NOT_FOUND or MESSAGE_NOT_FOUND, and nothing written, otherwise.
     */
    async forkChat(caller: Caller, chatId: string, input: ForkChatInput): Promise<ChatDto> {
      const source = await selectForkSource(pool, {
        userId: caller.userId,
        chatId,
        messageId: input.messageId,
      });
      if (!source) throw chatNotFound();
      if (!source.messages.length) throw new AppError('MESSAGE_NOT_FOUND', 'Message not found.');
      const fork = await insertFork(pool, {
        chatId: randomUUID(),
        userId: caller.userId,
        title: input.title ?? source.title,
        agentSettings: source.agentSettings,
        ...forkCopies(source.messages, source.attachments),
      });
      return toChatDto(fork);
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

/**
 * A fork's rows: each message copied under a new id (ids drawn and sorted, so the copies keep
 * their originals' order where two share a millisecond), its answers' `replyToId` and its
 * attachments following it. A copy has no run (runs stay with their chat). An attachment is a row
 * of its own naming the same stored file; a content block naming a copied attachment names its
 * copy, one naming any other of the user's attachments (sent by id) is left as it was. URLs stay
 * as written: every read signs them afresh for the reader, whose files they name.
 */
function forkCopies(
  messages: readonly ForkedMessageRow[],
  attachments: readonly ForkedAttachmentRow[],
): { messages: ForkedMessageRow[]; attachments: ForkedAttachmentRow[] } {
  const newIds = messages.map(() => randomUUID()).sort();
  const messageIds = new Map(messages.map((m, i) => [m.id, newIds[i] as string]));
  const attachmentIds = new Map(attachments.map((a) => [a.id, randomUUID()]));
  const copyBlock = (block: unknown) => {
    const id = (block as { attachmentId?: unknown }).attachmentId;
    const copy = typeof id === 'string' ? attachmentIds.get(id) : undefined;
    return copy ? { ...(block as object), attachmentId: copy } : block;
  };
  return {
    messages: messages.map((m) => ({
      ...m,
      id: messageIds.get(m.id) as string,
      replyToId: m.replyToId === null ? null : (messageIds.get(m.replyToId) ?? null),
      contentBlocks: m.contentBlocks.map(copyBlock),
    })),
    attachments: attachments.map((a) => ({
      ...a,
      id: attachmentIds.get(a.id) as string,
      messageId: messageIds.get(a.messageId) as string,
    })),
  };
}

export type ChatsOperations = ReturnType<typeof createChatsOperations>;
