import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { exampleChat, exampleForkRequest, exampleMessage } from './examples';
import type { ObjectStorage } from '../storage/storage';
import { attachmentSchema, toAttachmentDto } from './attachments';
import { cursorQuery, isoOrNull, limitQuery, listSchema, stored, visibleText } from './common';
import { contentBlockSchema, type ContentBlock } from './runs';
import { chatSettingsPatchShape, chatSettingsSchema, type ChatSettings } from './agent';

extendZodWithOpenApi(z);

export const DEFAULT_CHAT_TITLE = 'New chat';

/** A title: at most 120 characters, one of them not white space, stored trimmed (see visibleText). */
const title = visibleText(120);

export const chatSchema = z
  .object({
    id: z.uuid(),
    title: z.string(),
    isFavorite: z.boolean(),
    lastMessageAt: z.iso.datetime().nullable(),
    lastMessageId: z.uuid().nullable(),
    settings: chatSettingsSchema,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('Chat', { example: exampleChat });
export type ChatDto = z.output<typeof chatSchema>;

export const chatListSchema = listSchema(chatSchema, 'ChatList', exampleChat);

export const createChatSchema = z
  .object({ title: title.optional() })
  .strict()
  .openapi('NewChat', { example: { title: exampleChat.title } });

export const updateChatSchema = z
  .object({ title: title.optional(), isFavorite: z.boolean().optional(), ...chatSettingsPatchShape })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'Give title, isFavorite or a setting (model, instructions, maxSteps, tools).',
  })
  // The refinement in the document's terms: the object is strict, so one property is one of its own.
  .openapi('ChatUpdate', {
    minProperties: 1,
    example: { title: 'Lighthouse crops', isFavorite: true, model: 'claude', maxSteps: 4 },
  });
export type ChatUpdate = z.output<typeof updateChatSchema>;

export const chatParamsSchema = z.object({ chatId: z.uuid() });

/** A fork: the message the new chat's history ends with, and its title (the source's if left out). */
export const forkChatSchema = z
  .object({
    messageId: z.uuid().openapi({
      description:
        'A message of the chat (user or assistant): the fork holds the history up to and including it.',
    }),
    title: title.optional(),
  })
  .strict()
  .openapi('ForkRequest', { example: exampleForkRequest });
export type ForkChatInput = z.output<typeof forkChatSchema>;

export const chatListQuerySchema = z.object({
  limit: limitQuery(50, 20),
  cursor: cursorQuery,
  q: stored(z.string().min(1).max(120)).optional().openapi({ description: 'Case-insensitive title search.' }),
  favorite: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true'))
    // A boolean in the document: `true` or `false` on the wire, and no value to assume (an enum's
    // first value is what reference pages such as /docs fill in, and tick, for a first try).
    .openapi({
      type: 'boolean',
      description: 'Only favorites (true), or only others (false); all when left out.',
    }),
});
export type ChatListQuery = z.output<typeof chatListQuerySchema>;

export const messageListQuerySchema = z.object({
  limit: limitQuery(100, 50),
  cursor: cursorQuery,
  order: z.enum(['asc', 'desc']).default('asc').openapi({
    description:
      'Oldest first (`asc`), or newest first (`desc`: a long chat opens on its latest page); `nextCursor` goes on in the same order.',
  }),
});
export type MessageListQuery = z.output<typeof messageListQuerySchema>;

export interface ChatRow {
  id: string;
  title: string;
  isFavorite: boolean;
  lastMessageAt: Date | null;
  lastMessageId: string | null;
  activityAt: Date;
  agentSettings: ChatSettings;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns `toChatDto` needs, for hand-written statements. */
export const CHAT_COLUMNS =
  'id, title, "isFavorite", "lastMessageAt", "lastMessageId", "activityAt", "agentSettings", "createdAt", "updatedAt"';

export function toChatDto(row: ChatRow): ChatDto {
  return {
    id: row.id,
    title: row.title,
    isFavorite: row.isFavorite,
    lastMessageAt: isoOrNull(row.lastMessageAt),
    lastMessageId: row.lastMessageId,
    settings: row.agentSettings,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const messageSchema = z
  .object({
    id: z.uuid(),
    chatId: z.uuid(),
    role: z.enum(['user', 'assistant']),
    runId: z.uuid().nullable(),
    contentBlocks: z.array(contentBlockSchema),
    attachments: z.array(attachmentSchema),
    replyTo: z.uuid().nullable().openapi({
      description:
        'An assistant message: the user message it answers (extension). Several answers to one message are its alternatives (regenerated); the newest is the one the agent reads on. Null for a user message.',
      'x-extension': true,
    }),
    regeneratedFrom: z.uuid().nullable().openapi({
      description:
        'A regenerated answer: the earlier answer to the same message it replaced, which stays listed (extension). Null otherwise.',
      'x-extension': true,
    }),
    createdAt: z.iso.datetime(),
  })
  .openapi('Message', { example: exampleMessage });
export type MessageDto = z.output<typeof messageSchema>;

export const messageListSchema = listSchema(messageSchema, 'MessageList', exampleMessage);

export interface MessageRow {
  id: string;
  chatId: string;
  role: 'user' | 'assistant';
  runId: string | null;
  contentBlocks: unknown;
  replyToId: string | null;
  regeneratedFrom: string | null;
  createdAt: Date;
}

export interface AttachmentRow {
  id: string;
  filename: string;
  mimeType: string;
  status: string;
  storageKey: string;
}

/** A Message row and its attachments as the API shows them; content blocks are stored as shown. */
export function toMessageDto(
  storage: ObjectStorage,
  row: MessageRow,
  attachments: readonly AttachmentRow[],
): MessageDto {
  return {
    id: row.id,
    chatId: row.chatId,
    role: row.role,
    runId: row.runId,
    contentBlocks: row.contentBlocks as ContentBlock[],
    attachments: attachments.map((a) => toAttachmentDto(storage, a)),
    replyTo: row.replyToId,
    regeneratedFrom: row.regeneratedFrom,
    createdAt: row.createdAt.toISOString(),
  };
}
