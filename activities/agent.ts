import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkerDeps } from '../apps/worker/deps';
import { withTransaction } from '../core/db/client';
import { permanentFailure } from '../core/errors/failures';
import type { ModelMessage, ModelReply, ModelToolSpec } from '../core/model/types';
import type { ContentBlock, Plan } from '../core/schemas/runs';

/** Partial text reaches the snapshot at most this often, however fast the model streams. */
const TEXT_WRITE_INTERVAL_MS = 250;
/** How much of a chat the model sees. */
const HISTORY_MESSAGES = 40;
const HEARTBEAT_EVERY_MS = 1_000;

export interface AgentActivityDeps extends WorkerDeps {
  toolSpecs: ModelToolSpec[];
}

export type MarkRunStartedResult = 'STARTED' | 'CANCEL_REQUESTED' | 'NOT_QUEUED';

export function createAgentActivities(deps: AgentActivityDeps) {
  const { pool } = deps.db;

  /**
   * Images the run's tools made become attachments of the assistant message. Tools store their
   * output under `tools/<userId>/<toolCallId>/<filename>`, so the key is known without a lookup.
   */
  async function generatedImages(run: { userId: string }, blocks: ContentBlock[]) {
    const found = blocks.flatMap((b) =>
      b.type === 'tool_result' && b.result
        ? b.result.assets
            .filter((a) => a.mimeType.startsWith('image/') && a.filename)
            .map((a) => ({ toolCallId: b.toolCallId, filename: a.filename ?? '', mimeType: a.mimeType }))
        : [],
    );
    return Promise.all(
      found.map(async (a) => {
        const storageKey = `tools/${run.userId}/${a.toolCallId}/${a.filename}`;
        const object = await deps.storage.get(storageKey);
        object.body.destroy();
        return {
          id: uuidFromKey(storageKey),
          storageKey,
          filename: a.filename,
          mimeType: a.mimeType,
          size: object.size,
        };
      }),
    );
  }

  return {
    /** QUEUED → RUNNING, once; records this execution as the run's triggerRunId. */
    async markRunStarted({ runId }: { runId: string }): Promise<MarkRunStartedResult> {
      const processId = Context.current().info.workflowExecution?.runId ?? null;
      const { rows } = await pool.query<{ status: string; cancelRequested: boolean; mine: boolean }>(
        `WITH started AS (
           UPDATE "Run" SET status = 'RUNNING', "startedAt" = now(), "updatedAt" = now(),
                  "triggerRunId" = COALESCE("triggerRunId", $2)
            WHERE id = $1 AND status = 'QUEUED' AND "cancelRequestedAt" IS NULL
            RETURNING status)
         SELECT COALESCE((SELECT status::text FROM started), r.status::text) AS status,
                r."cancelRequestedAt" IS NOT NULL AS "cancelRequested",
                r."triggerRunId" IS NULL OR r."triggerRunId" = $2 AS mine
           FROM "Run" r WHERE r.id = $1`,
        [runId, processId],
      );
      const row = rows[0];
      if (!row) throw permanentFailure('RUN_NOT_FOUND', 'The run no longer exists.');
      if (row.status === 'RUNNING' && row.mine) return 'STARTED';
      if (row.status === 'QUEUED' && row.cancelRequested) {
        await pool.query(`UPDATE "Run" SET "triggerRunId" = COALESCE("triggerRunId", $2) WHERE id = $1`, [
          runId,
          processId,
        ]);
        return 'CANCEL_REQUESTED';
      }
      return 'NOT_QUEUED';
    },

    /** The chat up to and including this run's message, with attachments as URLs. */
    async loadHistory({ runId }: { runId: string }): Promise<ModelMessage[]> {
      const { rows } = await pool.query<{ role: 'user' | 'assistant'; contentBlocks: ContentBlock[] }>(
        `SELECT m.role, m."contentBlocks" FROM (
           SELECT m.role, m."contentBlocks", m."createdAt", m.id
             FROM "Run" r
             JOIN "Message" u ON u.id = r."messageId"
             JOIN "Message" m ON m."chatId" = r."chatId"
                             AND (m."createdAt", m.id) <= (u."createdAt", u.id)
            WHERE r.id = $1
            ORDER BY m."createdAt" DESC, m.id DESC
            LIMIT $2) m
         ORDER BY m."createdAt", m.id`,
        [runId, HISTORY_MESSAGES],
      );
      return rows.map(({ role, contentBlocks }) => toModelMessage(role, contentBlocks));
    },

    /** One model step, streaming its text into the run's snapshot as it arrives. */
    async callModel(input: {
      runId: string;
      step: number;
      messages: ModelMessage[];
      textSoFar: string;
    }): Promise<ModelReply> {
      if (!deps.model) throw permanentFailure('PROVIDER_NOT_CONFIGURED', 'No model provider is configured.');
      const ctx = Context.current();
      let streamed = '';
      let lastWrite = 0;
      let trailing: NodeJS.Timeout | undefined;
      let writing: Promise<unknown> = Promise.resolve();
      const flush = () => {
        clearTimeout(trailing);
        trailing = undefined;
        lastWrite = Date.now();
        const text = input.textSoFar + streamed;
        writing = writing.then(() =>
          pool.query(
            `UPDATE "Run" SET text = $2, "currentStep" = $3, "updatedAt" = now() WHERE id = $1 AND status = 'RUNNING'`,
            [input.runId, text, input.step],
          ),
        );
      };
      // At most one write per interval, and the last piece of a burst is never left unwritten.
      const writeText = (final: boolean) => {
        const wait = lastWrite + TEXT_WRITE_INTERVAL_MS - Date.now();
        if (final || wait <= 0) flush();
        else trailing ??= setTimeout(flush, wait);
      };
      writeText(true);
      // Heartbeats carry cancellation to us, so they go on while the model is silent too.
      const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      let reply: ModelReply;
      try {
        reply = await deps.model.complete({
          messages: input.messages,
          tools: deps.toolSpecs,
          signal: ctx.cancellationSignal,
          onText: (delta) => {
            streamed += delta;
            writeText(false);
          },
        });
      } finally {
        clearInterval(beat);
        clearTimeout(trailing);
      }
      streamed = reply.text;
      writeText(true);
      await writing;
      return reply;
    },

    async openPlanWaitpoint(input: {
      runId: string;
      waitpointId: string;
      plan: Plan;
      timeoutMs: number;
    }): Promise<void> {
      await withTransaction(pool, async (client) => {
        await client.query(
          `INSERT INTO "Waitpoint" (id, "runId", type, status, plan, "expiresAt")
         VALUES ($1, $2, 'PLAN_APPROVAL', 'PENDING', $3, now() + make_interval(secs => $4::double precision / 1000))
         ON CONFLICT (id) DO NOTHING`,
          [input.waitpointId, input.runId, JSON.stringify(input.plan), input.timeoutMs],
        );
        await client.query(
          `UPDATE "Run" SET status = 'WAITING', "updatedAt" = now() WHERE id = $1 AND status = 'RUNNING'`,
          [input.runId],
        );
      });
    },

    /** Expires a still-pending waitpoint; answers whatever decision the database holds. */
    async expireWaitpoint({ waitpointId }: { runId: string; waitpointId: string }): Promise<{
      status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED';
    }> {
      await pool.query(
        `UPDATE "Waitpoint" SET status = 'EXPIRED', "resolvedAt" = now() WHERE id = $1 AND status = 'PENDING'`,
        [waitpointId],
      );
      const { rows } = await pool.query<{ status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' }>(
        `SELECT status FROM "Waitpoint" WHERE id = $1`,
        [waitpointId],
      );
      return { status: rows[0]?.status ?? 'EXPIRED' };
    },

    async resumeRun({ runId }: { runId: string }): Promise<void> {
      await pool.query(
        `UPDATE "Run" SET status = 'RUNNING', "updatedAt" = now() WHERE id = $1 AND status = 'WAITING'`,
        [runId],
      );
    },

    /** The run's terminal state, and on success its assistant message: once, however often retried. */
    async finishRun(input: {
      runId: string;
      status: 'COMPLETE' | 'FAILED' | 'CANCELLED';
      text: string;
      contentBlocks: ContentBlock[];
      error: string | null;
    }): Promise<void> {
      await withTransaction(pool, async (client) => {
        const { rows } = await client.query<{ chatId: string; userId: string; assistantMessageId: string }>(
          `UPDATE "Run" SET status = $2, text = $3, error = $4, "finishedAt" = now(), "updatedAt" = now()
          WHERE id = $1 AND status IN ('QUEUED', 'RUNNING', 'WAITING')
          RETURNING "chatId", "userId", "assistantMessageId"`,
          [input.runId, input.status, input.text, input.error],
        );
        const run = rows[0];
        if (run) {
          await client.query(
            `UPDATE "Waitpoint" SET status = 'EXPIRED', "resolvedAt" = now() WHERE "runId" = $1 AND status = 'PENDING'`,
            [input.runId],
          );
          await client.query(
            `UPDATE "ToolCall" SET status = 'FAILED', error = $2, "finishedAt" = now() WHERE "runId" = $1 AND status = 'RUNNING'`,
            [
              input.runId,
              input.status === 'CANCELLED'
                ? 'The run was cancelled.'
                : 'The run ended before the tool finished.',
            ],
          );
          if (input.status === 'COMPLETE') {
            const images = await generatedImages(run, input.contentBlocks);
            input.contentBlocks.push(
              ...images.map((i) => ({
                type: 'image' as const,
                attachmentId: i.id,
                url: deps.storage.url(i.storageKey),
              })),
            );
            await client.query(
              `WITH msg AS (
               INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt")
               VALUES ($1, $2, 'assistant', $3, $4, now())
               ON CONFLICT (id) DO NOTHING
               RETURNING id, "createdAt")
             UPDATE "Chat" c SET "lastMessageAt" = msg."createdAt", "lastMessageId" = msg.id,
                    "activityAt" = msg."createdAt", "updatedAt" = now()
               FROM msg WHERE c.id = $2`,
              [run.assistantMessageId, run.chatId, input.runId, JSON.stringify(input.contentBlocks)],
            );
            // After the message: each attachment row points at it.
            for (const image of images) {
              await client.query(
                `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes")
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
               ON CONFLICT ("storageKey") DO NOTHING`,
                [
                  image.id,
                  run.userId,
                  run.chatId,
                  run.assistantMessageId,
                  image.storageKey,
                  image.filename,
                  image.mimeType,
                  image.size,
                ],
              );
            }
          }
        }
      });
    },
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;

function toModelMessage(role: 'user' | 'assistant', blocks: ContentBlock[]): ModelMessage {
  if (role === 'user') {
    return {
      role: 'user',
      text: blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'),
      media: blocks.flatMap((b) =>
        b.type === 'image' || b.type === 'video' || b.type === 'audio' ? [{ kind: b.type, url: b.url }] : [],
      ),
    };
  }
  // Earlier turns' tool exchanges are summarised as text: their provider call ids are long gone.
  const parts = blocks.flatMap((b) => {
    if (b.type === 'text') return [b.text];
    if (b.type === 'tool_result')
      return [
        b.result ? `[${b.toolName} result: ${b.result.output.url}]` : `[${b.toolName} failed: ${b.error}]`,
      ];
    return [];
  });
  return { role: 'assistant', text: parts.join('\n'), toolCalls: [] };
}

/** A stable id per stored object, so a retried finishRun names the same attachment. */
function uuidFromKey(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
