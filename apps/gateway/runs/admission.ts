import { randomBytes, randomUUID } from 'node:crypto';
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
 * Writes the chat (when new), the user message, its attachments (by id, and the rows of files
 * uploaded with the turn) and the QUEUED run as one statement, atomic without a transaction
 * round trip. The partial unique index on active runs decides a race between concurrent sends, in
 * any number of gateway processes: the loser's statement writes nothing (409 RUN_ACTIVE).
 */
export async function admitTurn(
  deps: GatewayDeps,
  turn: TurnRequest,
  uploads: readonly PreparedAttachment[] = [],
): Promise<AdmittedTurn> {
  const runId = randomUUID();
  const messageId = randomUUID();
  const assistantMessageId = randomUUID();
  const traceId = traceIdOf(turn.traceparent);
  const chatId = turn.chatId ?? randomUUID();

  const blocks: ContentBlock[] = [{ type: 'text', text: turn.text }];
  const attachmentIds = [...new Set(turn.attachmentIds)];
  if (attachmentIds.length) {
    const { rows } = await deps.db.pool.query<{ id: string; storageKey: string; mimeType: string }>(
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
  for (const u of uploads)
    blocks.push({ type: mediaKind(u.mimeType), attachmentId: u.id, url: deps.storage.url(u.storageKey) });

  let admitted: number;
  try {
    // Rows inserted by one CTE are invisible to its siblings, so a new chat is inserted with its
    // last-message fields already set and only an existing chat is updated; the foreign keys are
    // checked at the end of the statement, when every row is in place.
    const { rows } = await deps.db.pool.query<{ admitted: number }>({
      name: 'admit-turn',
      text: `WITH new_chat AS (
         INSERT INTO "Chat" (id, "userId", title, "lastMessageAt", "lastMessageId", "activityAt", "updatedAt")
         SELECT $2, $3, $4, now(), $5, now(), now() WHERE $4::text IS NOT NULL
         RETURNING id
       ), existing AS (
         -- Locked, so a delete of the chat is ordered against this send: either the delete comes
         -- first and this finds no chat, or it waits and then cancels the run this admits.
         SELECT id FROM "Chat" WHERE $4::text IS NULL AND id = $2 AND "userId" = $3 AND "deletedAt" IS NULL
            FOR NO KEY UPDATE
       ), chat AS (
         SELECT id FROM new_chat
         UNION ALL
         SELECT id FROM existing
       ), run AS (
         INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
         SELECT $1, chat.id, $3, $5, $6, $7, $8, now() FROM chat
         RETURNING id
       ), msg AS (
         INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
         SELECT $5, $2, 'user', run.id, $9, now() FROM run
         RETURNING id
       ), touched AS (
         UPDATE "Chat" c SET "lastMessageAt" = now(), "lastMessageId" = $5, "activityAt" = now(), "updatedAt" = now()
           FROM run WHERE c.id = $2
       ), linked AS (
         -- An attachment already on a message stays there; this one refers to it by id.
         UPDATE "Attachment" a SET "messageId" = COALESCE(a."messageId", $5), "chatId" = COALESCE(a."chatId", $2)
           FROM run WHERE a.id = ANY($10::uuid[])
       ), uploaded AS (
         INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes", status)
         SELECT u.id, $3, $2, $5, u."storageKey", u.filename, u."mimeType", u."sizeBytes", u.status
           FROM run, jsonb_to_recordset($11::jsonb) AS u(id uuid, "storageKey" text, filename text,
                                                        "mimeType" text, "sizeBytes" bigint, status text)
       )
       SELECT count(*)::int AS admitted FROM run`,
      values: [
        runId,
        chatId,
        turn.userId,
        turn.chatId ? null : defaultTitle(turn.text),
        messageId,
        assistantMessageId,
        turn.planMode,
        traceId,
        JSON.stringify(blocks),
        attachmentIds,
        JSON.stringify(uploads.map((u) => ({ ...u, sizeBytes: u.sizeBytes.toString() }))),
      ],
    });
    admitted = rows[0]?.admitted ?? 0;
  } catch (err) {
    if ((err as { code?: string }).code === PG_UNIQUE_VIOLATION) {
      throw new ConflictError('RUN_ACTIVE', 'A run of this chat is still active.');
    }
    throw err;
  }
  if (!admitted) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  return {
    messageId,
    run: {
      runId,
      chatId,
      userId: turn.userId,
      messageId,
      assistantMessageId,
      traceId,
      planMode: turn.planMode,
    },
  };
}
