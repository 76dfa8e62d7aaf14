import { randomBytes, randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { withTransaction } from '../../../core/db/client';
import { ConflictError, NotFoundError } from '../../../core/errors/app-error';
import type { ContentBlock } from '../../../core/schemas/runs';
import type { PreparedAttachment } from '../../../core/uploads/attachments';
import type { GatewayDeps } from '../deps';
import type { RunToStart } from './start';

const DEFAULT_TITLE = 'New chat';
const TITLE_FROM_TEXT = 60;
const PG_UNIQUE_VIOLATION = '23505';

export interface TurnRequest {
  userId: string;
  chatId?: string;
  text: string;
  imageUrls: string[];
  attachmentIds: string[];
  planMode: boolean;
  traceparent?: string;
}

export interface AdmittedTurn {
  run: RunToStart;
  messageId: string;
}

/** The W3C trace id of the admitting request: from `traceparent` when valid, else new. */
export function traceIdOf(traceparent: string | undefined): string {
  const match = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(
    traceparent?.trim().toLowerCase() ?? '',
  );
  const id = match?.[1];
  return id && !/^0+$/.test(id) ? id : randomBytes(16).toString('hex');
}

export function defaultTitle(text: string): string {
  const title = text.trim().replace(/\s+/g, ' ').slice(0, TITLE_FROM_TEXT).trim();
  return title || DEFAULT_TITLE;
}

function mediaKind(mimeType: string): 'image' | 'video' | 'audio' {
  if (mimeType.startsWith('video/')) return 'video';
  if (mimeType.startsWith('audio/')) return 'audio';
  return 'image';
}

/**
 * Writes the chat (when new), the user message, its attachments and the QUEUED run in one
 * transaction. The partial unique index on active runs decides a race between concurrent sends,
 * in any number of gateway processes: the loser's transaction rolls back whole (409 RUN_ACTIVE).
 * `withinTransaction` lets the caller add rows (uploaded files) to the same transaction.
 */
export async function admitTurn(
  deps: GatewayDeps,
  turn: TurnRequest,
  withinTransaction?: (
    client: PoolClient,
    ids: { chatId: string; messageId: string },
  ) => Promise<ContentBlock[]>,
): Promise<AdmittedTurn> {
  const runId = randomUUID();
  const messageId = randomUUID();
  const assistantMessageId = randomUUID();
  const traceId = traceIdOf(turn.traceparent);
  return withTransaction(deps.db.pool, async (client) => {
    let chatId = turn.chatId;
    if (chatId) {
      const { rowCount } = await client.query(
        `SELECT 1 FROM "Chat" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
        [chatId, turn.userId],
      );
      if (!rowCount) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
    } else {
      chatId = randomUUID();
      await client.query(`INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, $3, now())`, [
        chatId,
        turn.userId,
        defaultTitle(turn.text),
      ]);
    }

    const blocks: ContentBlock[] = [{ type: 'text', text: turn.text }];
    const attachmentIds = [...new Set(turn.attachmentIds)];
    if (attachmentIds.length) {
      const { rows } = await client.query<{ id: string; storageKey: string; mimeType: string }>(
        `SELECT id, "storageKey", "mimeType" FROM "Attachment" WHERE id = ANY($1::uuid[]) AND "userId" = $2`,
        [attachmentIds, turn.userId],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const id of attachmentIds) {
        const a = byId.get(id);
        if (!a) throw new NotFoundError('ATTACHMENT_NOT_FOUND', 'An attachment was not found.');
        blocks.push({ type: mediaKind(a.mimeType), attachmentId: a.id, url: deps.storage.url(a.storageKey) });
      }
    }
    for (const url of turn.imageUrls) blocks.push({ type: 'image', attachmentId: null, url });

    try {
      await client.query(
        `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
         VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
        [runId, chatId, turn.userId, messageId, assistantMessageId, turn.planMode, traceId],
      );
    } catch (err) {
      if ((err as { code?: string }).code === PG_UNIQUE_VIOLATION) {
        throw new ConflictError('RUN_ACTIVE', 'A run of this chat is still active.');
      }
      throw err;
    }
    await client.query(
      `WITH msg AS (
         INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
         VALUES ($1, $2, 'user', $3, $4, now())
         RETURNING id, "createdAt")
       UPDATE "Chat" c SET "lastMessageAt" = msg."createdAt", "lastMessageId" = msg.id,
              "activityAt" = msg."createdAt", "updatedAt" = now()
         FROM msg WHERE c.id = $2`,
      [messageId, chatId, runId, JSON.stringify(blocks)],
    );
    if (attachmentIds.length) {
      // An attachment already on a message stays there; this one refers to it by id.
      await client.query(
        `UPDATE "Attachment" SET "messageId" = COALESCE("messageId", $2), "chatId" = COALESCE("chatId", $3)
          WHERE id = ANY($1::uuid[])`,
        [attachmentIds, messageId, chatId],
      );
    }
    if (withinTransaction) {
      const uploaded = await withinTransaction(client, { chatId, messageId });
      if (uploaded.length) {
        await client.query(
          `UPDATE "Message" SET "contentBlocks" = "contentBlocks" || $2::jsonb WHERE id = $1`,
          [messageId, JSON.stringify(uploaded)],
        );
      }
    }
    return {
      messageId,
      run: {
        id: runId,
        chatId,
        userId: turn.userId,
        messageId,
        assistantMessageId,
        traceId,
        planMode: turn.planMode,
      },
    };
  });
}

/** Writes the rows of files uploaded with a turn, inside the turn's transaction. */
export async function insertUploadedAttachments(
  deps: GatewayDeps,
  client: PoolClient,
  rows: readonly PreparedAttachment[],
  ids: { chatId: string; messageId: string },
): Promise<ContentBlock[]> {
  await client.query(
    `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes", status)
     SELECT a.id, a."userId", $2, $3, a."storageKey", a.filename, a."mimeType", a."sizeBytes", a.status
       FROM jsonb_to_recordset($1::jsonb) AS a(id uuid, "userId" uuid, "storageKey" text, filename text,
                                               "mimeType" text, "sizeBytes" bigint, status text)`,
    [
      JSON.stringify(rows.map((r) => ({ ...r, sizeBytes: r.sizeBytes.toString() }))),
      ids.chatId,
      ids.messageId,
    ],
  );
  return rows.map((r) => ({
    type: mediaKind(r.mimeType),
    attachmentId: r.id,
    url: deps.storage.url(r.storageKey),
  }));
}
