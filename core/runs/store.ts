import type { Pool } from 'pg';
import { CUTOFF } from '../db/retention';
import type { ModelReply } from '../model/types';
import type { Transport } from '../schemas/common';
import type { ContentBlock, Plan, RunMetadata } from '../schemas/runs';
import { runStepUsageSql, runUsageSql } from './model-calls';
import {
  deliveriesColumn,
  eventCte,
  toRecorded,
  type DeliveryRow,
  type RecordedDelivery,
} from '../webhooks/store';
import {
  PROMOTED_CTE,
  toPromotedRun,
  UNTAKEN_PROMOTED_JSON,
  WAITING_FOR_JSON,
  type CancelledRun,
  type OnActiveRun,
  type PromotedRun,
} from './queue';

/**
 * The run's lifecycle in SQL: every change of a run's status is one statement that also records
 * the webhook event announcing it (see eventCte), so a status and its event never part. The row
 * lock each statement takes decides every race (finish against cancel, two finishers, a late
 * retry): the second writer finds the row already changed and is told so.
 */

export type TerminalStatus = 'COMPLETE' | 'FAILED' | 'CANCELLED';
const ACTIVE = `('QUEUED', 'RUNNING', 'WAITING')`;
/** A waitpoint `w` as the API shows it (never its internal reply), for toWaitpointDto. */
const WAITPOINT_JSON = `jsonb_build_object(
  'id', w.id, 'type', w.type, 'status', w.status, 'plan', w.plan, 'feedback', w.feedback,
  'createdAt', w."createdAt", 'resolvedAt', w."resolvedAt", ${decidedJson('w')})`;
/** The decider's columns of waitpoint `alias`, as jsonb_build_object arguments. */
function decidedJson(alias: string): string {
  return `'decidedByUserId', ${alias}."decidedByUserId", 'decidedByApiKeyId', ${alias}."decidedByApiKeyId",
  'decidedBySessionId', ${alias}."decidedBySessionId", 'decidedVia', ${alias}."decidedVia",
  'decidedAt', ${alias}."decidedAt"`;
}

/**
 * `data` of an agent.* event, built from a Run row aliased `s`; a terminal event's carries the
 * run's usage (an extension: the spec's fields stay as they are).
 */
function agentEventData(status: string, error?: string, terminal = false): string {
  const data = `jsonb_build_object('chatId', s."chatId", 'runId', s.id, 'messageId', s."messageId",
    'traceId', s."traceId", 'processId', COALESCE(s."triggerRunId", ''), 'status', ${status},
    'assistantMessageId', s."assistantMessageId")`;
  // The send's metadata (an extension) only when it has some: without, data is the spec's strings.
  const extra = `'metadata', NULLIF(s.metadata, '{}'::jsonb)${error ? `, 'error', ${error}` : ''}`;
  const withExtra = `${data} || jsonb_strip_nulls(jsonb_build_object(${extra}))`;
  return terminal ? `${withExtra} || jsonb_build_object('usage', ${runUsageSql('s.id')})` : withExtra;
}

/**
 * What a step reads of its chat after its stored summary: the messages up to and including the
 * run's own, the newest `limit` of them and one more, which only says the read stopped short
 * (oldest first). An answer a later answer to the same message replaced (regenerated) is left out:
 * the model reads on from the newest; so is a turn still waiting in the chat's queue (not said
 * yet: an interrupting turn starts ahead of the queued ones). The read is the `chat_history` function of the schema
 * (migrations chat_history_read and chat_history_queue), which walks the index on (chatId, createdAt, id)
 * down from the run's message whatever the chat's length. `cur` is the gate's row of the run (its
 * chat, its message's position, its summary's).
 */
export function historySql(cur: string, limit: string): string {
  return `chat_history(${cur}."chatId", ${cur}."messageAt", ${cur}."messageId", ${cur}."summaryAt",
                       ${cur}."summaryId", ${limit})`;
}

/** A stored message as the model's context reads it. */
export interface HistoryRow {
  id: string;
  createdAt: string;
  role: 'user' | 'assistant';
  contentBlocks: ContentBlock[];
}

/** A chat's summary (compaction): its text, and the last message it stands for. */
export interface StoredSummary {
  summary: string;
  throughCreatedAt: string;
  throughMessageId: string;
  messages: number;
}

/** What a step's model sees of its chat, and the run's settings, as the gate read them. */
export interface StepContext {
  chatId: string;
  /** Null for a run admitted before settings existed (the operator's then). */
  settings: StoredRunSettings | null;
  budget: { maxCredits?: string; maxToolCalls?: number } | null;
  summary: StoredSummary | null;
  /** The messages after the summary up to and including the run's, oldest first (see historySql). */
  history: HistoryRow[];
  /** False when more messages lie between the summary (or the chat's start) and the oldest read. */
  historyComplete: boolean;
  /** This step's reply, when an earlier attempt of the step got and paid for it. */
  chargedReply: ModelReply | null;
}

/** A run's settings as admission stored them (core/schemas/agent RunSettings, without the budget). */
export interface StoredRunSettings {
  model: string | null;
  instructions: string;
  maxSteps: number;
  tools: string[];
}

export type StepGate =
  /** This execution runs the run: first step, or a later one, or a retry of either. */
  | { kind: 'run'; userId: string; deliveries: RecordedDelivery[]; context: StepContext }
  /** A cancel was asked for, or the chat deleted, before this step: the run must end CANCELLED. */
  | { kind: 'stop' }
  /** This execution already ended the run (a retry after the ending committed). */
  | { kind: 'ended'; status: TerminalStatus; error: string | null }
  /** Another execution owns the run, or it ended without this one: nothing to do. */
  | { kind: 'other' }
  | { kind: 'missing' };

/**
 * Checks, at the start of every model step, that this execution may go on, and moves a QUEUED
 * run to RUNNING with its `agent.started` event: the one place that writes `triggerRunId`, since
 * only the execution itself knows its id for sure. It records the step as the run's current one,
 * so the snapshot shows what the run is doing from the step's start, from the tables alone, and
 * reads what the model is to see: the run's settings, its chat's summary and the newest
 * `historyLimit` messages after it (historySql). A reservation an earlier attempt of this step left
 * (it died mid-call) is given back, so the step reserves anew. One statement, under the run's row lock.
 */
export async function gateStep(
  pool: Pool,
  input: { runId: string; triggerRunId: string; step: number; historyLimit: number },
): Promise<StepGate> {
  const { rows } = await pool.query<{
    status: string;
    triggerRunId: string | null;
    error: string | null;
    stopRequested: boolean;
    started: boolean;
    userId: string;
    deliveries: DeliveryRow[];
    chatId: string;
    settings: StoredRunSettings | null;
    budget: StepContext['budget'];
    summary: StoredSummary | null;
    history: HistoryRow[];
    chargedReply: ModelReply | null;
  }>({
    name: 'run-gate-step',
    text: `WITH cur AS (
             SELECT r.id, r.status::text AS status, r."triggerRunId", r.error, r."userId", r."chatId",
                    r.settings, r.budget, u."createdAt" AS "messageAt", r."messageId",
                    COALESCE(s."throughCreatedAt", '-infinity') AS "summaryAt",
                    COALESCE(s."throughMessageId", '00000000-0000-0000-0000-000000000000') AS "summaryId",
                    CASE WHEN s."chatId" IS NOT NULL THEN jsonb_build_object('summary', s.summary,
                      'throughCreatedAt', s."throughCreatedAt", 'throughMessageId', s."throughMessageId",
                      'messages', s.messages) END AS summary,
                    r."cancelRequestedAt" IS NOT NULL OR c."deletedAt" IS NOT NULL AS "stopRequested"
               FROM "Run" r JOIN "Chat" c ON c.id = r."chatId" JOIN "Message" u ON u.id = r."messageId"
               LEFT JOIN "ChatSummary" s ON s."chatId" = r."chatId"
              WHERE r.id = $1
                FOR UPDATE OF r
           ), released AS (
             UPDATE "ModelCall" m SET status = 'RELEASED', "finishedAt" = now()
               FROM cur WHERE m."runId" = cur.id AND m.step = $3 AND m.status = 'RESERVED'
           ), started AS (
             UPDATE "Run" r SET status = 'RUNNING', "startedAt" = now(), "updatedAt" = now(), "triggerRunId" = $2,
                    "currentStep" = $3
               FROM cur WHERE r.id = cur.id AND cur.status = 'QUEUED' AND NOT cur."stopRequested"
             RETURNING r.*
           ), stepped AS (
             UPDATE "Run" r SET "currentStep" = $3, "updatedAt" = now()
               FROM cur WHERE r.id = cur.id AND cur.status = 'RUNNING' AND cur."triggerRunId" = $2
                AND NOT cur."stopRequested" AND r."currentStep" < $3
           ), ${eventCte('announced', {
             from: 'started',
             userId: 's."userId"',
             event: `'agent.started'`,
             key: 's.id',
             data: agentEventData(`'QUEUED'`),
           })}
           SELECT cur.status, cur."triggerRunId", cur.error, cur."stopRequested", cur."userId", cur."chatId",
                  cur.settings, cur.budget, cur.summary,
                  EXISTS (SELECT 1 FROM started) AS started, ${deliveriesColumn('announced')} AS deliveries,
                  ${historySql('cur', '$4')} AS history,
                  (SELECT m.reply FROM "ModelCall" m WHERE m."runId" = cur.id AND m.step = $3 AND m.kind = 'reply'
                      AND m.status = 'CHARGED') AS "chargedReply"
             FROM cur`,
    values: [input.runId, input.triggerRunId, input.step, input.historyLimit],
  });
  const row = rows[0];
  if (!row) return { kind: 'missing' };
  const context = (): StepContext => ({
    chatId: row.chatId,
    settings: row.settings,
    budget: row.budget,
    summary: row.summary,
    // Read newest first: the one past the limit only says the read stopped short of the summary.
    history: row.history.slice(Math.max(0, row.history.length - input.historyLimit)),
    historyComplete: row.history.length <= input.historyLimit,
    chargedReply: row.chargedReply,
  });
  if (row.started)
    return {
      kind: 'run',
      userId: row.userId,
      deliveries: toRecorded(row.userId, row.deliveries),
      context: context(),
    };
  const mine = row.triggerRunId === input.triggerRunId;
  if (row.status === 'QUEUED') return row.stopRequested ? { kind: 'stop' } : { kind: 'other' };
  if (row.status === 'RUNNING' || row.status === 'WAITING') {
    if (!mine) return { kind: 'other' };
    return row.stopRequested
      ? { kind: 'stop' }
      : { kind: 'run', userId: row.userId, deliveries: [], context: context() };
  }
  return mine ? { kind: 'ended', status: row.status as TerminalStatus, error: row.error } : { kind: 'other' };
}

/** Whether the run's work should stop: its cancel is recorded, its chat deleted, or it is gone. */
export async function stopRequested(pool: Pool, runId: string): Promise<boolean> {
  const { rows } = await pool.query<{ stop: boolean }>({
    name: 'run-stop-requested',
    text: `SELECT r."cancelRequestedAt" IS NOT NULL OR c."deletedAt" IS NOT NULL AS stop
             FROM "Run" r JOIN "Chat" c ON c.id = r."chatId" WHERE r.id = $1`,
    values: [runId],
  });
  return rows[0]?.stop ?? true;
}

/** The partial text the snapshot shows while the model streams. */
export async function writeRunText(
  pool: Pool,
  input: { runId: string; text: string; step: number },
): Promise<void> {
  await pool.query({
    name: 'run-write-text',
    text: `UPDATE "Run" SET text = $2, "currentStep" = $3, "updatedAt" = now() WHERE id = $1 AND status = 'RUNNING'`,
    values: [input.runId, input.text, input.step],
  });
}

/**
 * Opens the plan's waitpoint, with the reply that proposed it, and moves the run to WAITING, in one
 * statement, only while the run is RUNNING with no cancel asked for. False: the run is being
 * cancelled or has ended, and no waitpoint was opened.
 */
export async function openPlanWaitpoint(
  pool: Pool,
  input: { runId: string; waitpointId: string; plan: Plan; reply?: ModelReply; timeoutMs: number },
): Promise<boolean> {
  const { rows } = await pool.query<{ open: boolean }>({
    name: 'run-open-waitpoint',
    text: `WITH waiting AS (
             UPDATE "Run" SET status = 'WAITING', "updatedAt" = now()
              WHERE id = $2 AND status = 'RUNNING' AND "cancelRequestedAt" IS NULL
             RETURNING id
           ), opened AS (
             INSERT INTO "Waitpoint" (id, "runId", type, status, plan, reply, "expiresAt")
             SELECT $1, waiting.id, 'PLAN_APPROVAL', 'PENDING', $3, $5,
                    now() + make_interval(secs => $4::double precision / 1000)
               FROM waiting
             ON CONFLICT (id) DO NOTHING
             RETURNING id
           )
           SELECT EXISTS (SELECT 1 FROM opened) AS open`,
    values: [
      input.waitpointId,
      input.runId,
      JSON.stringify(input.plan),
      input.timeoutMs,
      JSON.stringify(input.reply ?? null),
    ],
  });
  return rows[0]?.open ?? false;
}

/**
 * The reply a plan's waitpoint was opened with, when it was: a step retried after it opened (its
 * worker died before the step's result was recorded) goes on with the plan the approver sees,
 * whatever its decision, rather than asking the model for another.
 */
export async function selectPlanReply(pool: Pool, waitpointId: string): Promise<ModelReply | undefined> {
  const { rows } = await pool.query<{ reply: ModelReply | null }>(
    `SELECT reply FROM "Waitpoint" WHERE id = $1`,
    [waitpointId],
  );
  return rows[0]?.reply ?? undefined;
}

export type WaitpointStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';

/**
 * The approval timer fired: expire the waitpoint unless a decision got there first, and answer
 * the decision the database holds (a decision claimed a moment before the timer still counts).
 */
export async function expirePlanWaitpoint(
  pool: Pool,
  waitpointId: string,
): Promise<{ status: WaitpointStatus; feedback: string | null }> {
  const { rows } = await pool.query<{ status: WaitpointStatus; feedback: string | null }>({
    name: 'run-expire-waitpoint',
    text: `WITH expired AS (
             UPDATE "Waitpoint" SET status = 'EXPIRED', "resolvedAt" = now()
              WHERE id = $1 AND status = 'PENDING'
             RETURNING status, feedback)
           SELECT status, feedback FROM expired
           UNION ALL
           SELECT status, feedback FROM "Waitpoint" WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM expired)`,
    values: [waitpointId],
  });
  return rows[0] ?? { status: 'EXPIRED', feedback: null };
}

export interface FinishRunInput {
  runId: string;
  /** What the caller saw; a COMPLETE turn whose run was asked to cancel ends CANCELLED instead. */
  status: TerminalStatus;
  /** The user-safe reason of a FAILED or CANCELLED run. */
  error: string | null;
  text: string;
  /** The assistant message, written when the run ends COMPLETE. */
  contentBlocks: ContentBlock[];
  /** Rows of the images the run's tools made, attached to the assistant message. */
  images: { id: string; storageKey: string; filename: string; mimeType: string; sizeBytes: number }[];
  /** What a still-pending waitpoint becomes: EXPIRED for the approval timeout, else CANCELLED. */
  waitpointStatus: 'EXPIRED' | 'CANCELLED';
}

export interface FinishedRun {
  status: TerminalStatus;
  error: string | null;
  /** False when the run had already ended: someone else's statement decided it. */
  endedNow: boolean;
  deliveries: RecordedDelivery[];
  /**
   * The chat's next turn, promoted from its queue by this ending (or, when the run had already
   * ended, promoted by that ending and not yet taken by any execution): the caller starts it.
   */
  next: PromotedRun | null;
}

export const CANCELLED_MESSAGE = 'The run was cancelled.';

/**
 * Ends a run, once: its status, error and text; its pending waitpoint and running tool calls
 * closed; on COMPLETE the assistant message, its generated images and the chat's last message;
 * and its one terminal event. The update's own WHERE decides every race under the row lock: a
 * run already ended is left alone (and reported as it ended), and a COMPLETE that meets a cancel
 * already asked for (or a deleted chat) ends CANCELLED, so a 202 cancel always wins. The chat's
 * row is locked first, as an admission locks it, and the chat's next queued turn becomes its head
 * in the same statement (migration run_queue): the chat is never left with a queue and no head,
 * and a send racing the ending either queues before it or finds the chat free after it. Null
 * when the run does not exist.
 */
export async function finishRun(pool: Pool, input: FinishRunInput): Promise<FinishedRun | null> {
  const { rows } = await pool.query<{
    status: TerminalStatus;
    error: string | null;
    userId: string;
    deliveries: DeliveryRow[];
    next: Record<string, unknown> | null;
  }>({
    name: 'run-finish',
    text: `WITH cur AS (
             SELECT r.id, CASE WHEN $2 = 'COMPLETE'
                                AND (r."cancelRequestedAt" IS NOT NULL OR c."deletedAt" IS NOT NULL)
                               THEN 'CANCELLED' ELSE $2 END AS final
               FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
              WHERE r.id = $1 AND r.status IN ${ACTIVE} AND chat_queue_lock(r."chatId")
                FOR UPDATE OF r
           ), fin AS (
             UPDATE "Run" r
                SET status = cur.final::"RunStatus",
                    error = CASE WHEN cur.final = 'COMPLETE' THEN NULL
                                 WHEN cur.final = $2 THEN $3
                                 ELSE $8 END,
                    text = $4, "finishedAt" = now(), "updatedAt" = now()
               FROM cur WHERE r.id = cur.id
             RETURNING r.*
           ), waitpoints AS (
             -- A recorded cancel decided a pending plan when it was recorded, as the snapshot showed.
             UPDATE "Waitpoint" w
                SET status = (CASE WHEN fin."cancelRequestedAt" IS NULL THEN $7 ELSE 'CANCELLED' END)::"WaitpointStatus",
                    "resolvedAt" = COALESCE(fin."cancelRequestedAt", now())
               FROM fin WHERE w."runId" = fin.id AND w.status = 'PENDING'
           ), models AS (
             -- A model call the run's ending cut short is not charged: its reservation goes back.
             UPDATE "ModelCall" m SET status = 'RELEASED', "finishedAt" = now()
               FROM fin WHERE m."runId" = fin.id AND m.status = 'RESERVED'
           ), tools AS (
             UPDATE "ToolCall" t SET status = 'FAILED', "finishedAt" = now(),
                    error = CASE WHEN fin.status = 'CANCELLED' THEN $8
                                 ELSE 'The run ended before the tool finished.' END
               FROM fin WHERE t."runId" = fin.id AND t.status = 'RUNNING'
           ), msg AS (
             INSERT INTO "Message" (id, "chatId", role, "runId", "replyToId", "contentBlocks", "createdAt")
             SELECT fin."assistantMessageId", fin."chatId", 'assistant', fin.id, fin."messageId", $5::jsonb, now()
               FROM fin WHERE fin.status = 'COMPLETE'
             ON CONFLICT (id) DO NOTHING
             RETURNING id, "chatId", "createdAt"
           ), chat AS (
             UPDATE "Chat" c SET "lastMessageAt" = msg."createdAt", "lastMessageId" = msg.id,
                    "activityAt" = msg."createdAt", "updatedAt" = now()
               FROM msg WHERE c.id = msg."chatId"
           ), images AS (
             -- Checked at the end of the statement, when the message row is in place.
             INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes")
             SELECT a.id, fin."userId", fin."chatId", fin."assistantMessageId", a."storageKey", a.filename,
                    a."mimeType", a."sizeBytes"
               FROM fin, jsonb_to_recordset($6::jsonb) AS a(id uuid, "storageKey" text, filename text,
                                                             "mimeType" text, "sizeBytes" bigint)
              WHERE fin.status = 'COMPLETE'
             ON CONFLICT (id) DO NOTHING
           ), ${eventCte('ended', {
             from: 'fin',
             userId: 's."userId"',
             event: `CASE WHEN s.status = 'COMPLETE' THEN 'agent.completed' ELSE 'agent.failed' END`,
             key: 's.id',
             data: agentEventData('s.status', `CASE WHEN s.status = 'FAILED' THEN s.error END`, true),
           })}, ${PROMOTED_CTE}
           SELECT fin.status, fin.error, fin."userId", ${deliveriesColumn('ended')} AS deliveries,
                  (SELECT to_jsonb(p) FROM promoted p) AS next
             FROM fin`,
    values: [
      input.runId,
      input.status,
      input.error,
      input.text,
      JSON.stringify(input.contentBlocks),
      JSON.stringify(input.images),
      input.waitpointStatus,
      CANCELLED_MESSAGE,
    ],
  });
  const ended = rows[0];
  if (ended) {
    return {
      status: ended.status,
      error: ended.error,
      endedNow: true,
      deliveries: toRecorded(ended.userId, ended.deliveries),
      next: ended.next && toPromotedRun(ended.next),
    };
  }
  const existing = await pool.query<{
    status: string;
    error: string | null;
    next: Record<string, unknown> | null;
  }>(`SELECT r.status::text, r.error, ${UNTAKEN_PROMOTED_JSON} AS next FROM "Run" r WHERE r.id = $1`, [
    input.runId,
  ]);
  const row = existing.rows[0];
  if (!row) return null;
  // Still active here means the row changed under us between the two statements; the caller retries.
  if (!['COMPLETE', 'FAILED', 'CANCELLED'].includes(row.status)) throw new Error('The run is still active.');
  return {
    status: row.status as TerminalStatus,
    error: row.error,
    endedNow: false,
    deliveries: [],
    next: row.next && toPromotedRun(row.next),
  };
}

export interface ChatScope {
  userId: string;
  chatId: string;
}

export interface RunScope extends ChatScope {
  runId: string;
}

/** Why a write scoped to a caller's run matched nothing. */
export type RunMiss = 'CHAT_NOT_FOUND' | 'RUN_NOT_FOUND' | 'RUN_NOT_ACTIVE';

export async function explainRunMiss(pool: Pool, scope: RunScope): Promise<RunMiss> {
  const { rows } = await pool.query<{ status: string | null }>(
    `SELECT (SELECT r.status::text FROM "Run" r WHERE r.id = $3 AND r."chatId" = c.id) AS status
       FROM "Chat" c WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    [scope.userId, scope.chatId, scope.runId],
  );
  const row = rows[0];
  if (!row) return 'CHAT_NOT_FOUND';
  return row.status ? 'RUN_NOT_ACTIVE' : 'RUN_NOT_FOUND';
}

/**
 * Records a cancel on an active run of the caller's chat. Taken under the run's row lock, it is
 * ordered against finishRun: a cancel recorded here makes the run end CANCELLED whatever its
 * model does meanwhile, and a run that ended first is not active here any more. Null: nothing
 * active matched.
 */
export async function requestRunCancel(
  pool: Pool,
  scope: RunScope,
): Promise<{ triggerRunId: string | null; queued: boolean } | null> {
  const { rows } = await pool.query<{ triggerRunId: string | null; queued: boolean }>(
    `UPDATE "Run" r SET "cancelRequestedAt" = COALESCE(r."cancelRequestedAt", now()), "updatedAt" = now()
       FROM "Chat" c
      WHERE r.id = $3 AND r."chatId" = $2 AND c.id = r."chatId" AND c."userId" = $1 AND c."deletedAt" IS NULL
        AND r.status IN ${ACTIVE}
      RETURNING r."triggerRunId", r."queueSeq" IS NOT NULL AS queued`,
    [scope.userId, scope.chatId, scope.runId],
  );
  return rows[0] ?? null;
}

/** Records a cancel on the chat's active runs, its head and its queued turns (the chat is being deleted). */
export async function requestChatRunCancel(pool: Pool, chatId: string): Promise<CancelledRun[]> {
  const { rows } = await pool.query<CancelledRun>(
    `UPDATE "Run" SET "cancelRequestedAt" = COALESCE("cancelRequestedAt", now()), "updatedAt" = now()
      WHERE "chatId" = $1 AND status IN ${ACTIVE}
      RETURNING id AS "runId", "triggerRunId", "queueSeq" IS NOT NULL AS queued`,
    [chatId],
  );
  return rows;
}

/**
 * The run's webhook ledger: every delivery of its events (its agent events, keyed by the run, and
 * its tool calls' tool.completed, keyed by the call) to the user's live endpoints, with its status
 * and attempt count. Each lookup names the unique (endpoint, event, key) index in full.
 */
const RUN_WEBHOOKS_JSON = `COALESCE((SELECT jsonb_agg(jsonb_build_object(
    'deliveryId', d.id, 'event', d.event, 'envelopeId', d."envelopeId", 'endpointId', d."endpointId",
    'toolCallId', CASE WHEN d.event = 'tool.completed' THEN d."idempotencyKey" END,
    'status', d.status, 'attempts', last.attempts, 'lastAttemptAt', last."startedAt",
    'lastStatusCode', last."statusCode", 'deliveredAt', d."deliveredAt")
    ORDER BY d."createdAt", d.event, d."endpointId")
   FROM "WebhookEndpoint" e
   JOIN "WebhookDelivery" d ON d."endpointId" = e.id
    AND d.event = ANY('{agent.started,agent.completed,agent.failed,tool.completed}'::text[])
    AND d."idempotencyKey" = ANY(r.id::text || ARRAY(SELECT t.id::text FROM "ToolCall" t WHERE t."runId" = r.id))
   CROSS JOIN LATERAL (
     SELECT count(*)::int AS attempts,
            (array_agg(a."startedAt" ORDER BY a.series DESC, a.attempt DESC))[1] AS "startedAt",
            (array_agg(a."statusCode" ORDER BY a.series DESC, a.attempt DESC))[1] AS "statusCode"
       FROM "WebhookAttempt" a WHERE a."deliveryId" = d.id) last
  WHERE e."userId" = r."userId" AND e."deletedAt" IS NULL), '[]'::jsonb)`;

/** Who decided a waitpoint's plan, and when; null until a person decides it. */
export interface WaitpointDecider {
  decidedByUserId: string | null;
  decidedByApiKeyId: string | null;
  decidedBySessionId: string | null;
  decidedVia: string | null;
  decidedAt: Date | string | null;
}

/** A waitpoint as WAITPOINT_JSON gives it. */
export interface WaitpointJson extends WaitpointDecider {
  id: string;
  status: WaitpointStatus;
  plan: unknown;
  feedback: string | null;
  createdAt: string;
  resolvedAt: string | null;
}

/** A chat's active run, with its open waitpoint if any; undefined when the chat has none. */
export async function selectActiveRun(
  pool: Pool,
  userId: string,
  chatId: string,
): Promise<
  { id: string; status: 'QUEUED' | 'RUNNING' | 'WAITING'; waitpoint: WaitpointJson | null } | undefined
> {
  const { rows } = await pool.query<{
    id: string;
    status: 'QUEUED' | 'RUNNING' | 'WAITING';
    waitpoint: WaitpointJson | null;
  }>(
    `SELECT r.id, r.status,
            (SELECT ${WAITPOINT_JSON} FROM "Waitpoint" w
              WHERE w."runId" = r.id AND w.status = 'PENDING' ORDER BY w."createdAt" DESC LIMIT 1) AS waitpoint
       FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
      WHERE r."chatId" = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL AND r.status IN ${ACTIVE}
        AND r."queueSeq" IS NULL`,
    [userId, chatId],
  );
  return rows[0];
}

export interface WaitpointRow extends WaitpointDecider {
  id: string;
  status: WaitpointStatus;
  plan: unknown;
  feedback: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
  triggerRunId: string | null;
}

export type DecisionMiss = RunMiss | 'WAITPOINT_NOT_FOUND' | 'WAITPOINT_RESOLVED' | 'PLAN_CHANGED';

/** Who decides: the user, and the key or session they came with. */
export interface Decider {
  userId: string;
  apiKeyId?: string;
  sessionId?: string;
  via: string;
}

/** The plan of the caller's waitpoint, and its status; undefined when there is no such waitpoint. */
export async function selectWaitpointPlan(
  pool: Pool,
  scope: RunScope & { waitpointId: string },
): Promise<{ plan: unknown; status: WaitpointStatus } | undefined> {
  const { rows } = await pool.query<{ plan: unknown; status: WaitpointStatus }>(
    `SELECT w.plan, w.status
       FROM "Waitpoint" w JOIN "Run" r ON r.id = w."runId" JOIN "Chat" c ON c.id = r."chatId"
      WHERE w.id = $4 AND r.id = $3 AND r."chatId" = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    [scope.userId, scope.chatId, scope.runId, scope.waitpointId],
  );
  return rows[0];
}

/**
 * Claims a plan's decision for the caller: the pending waitpoint of an active run that no cancel
 * has been asked for. An approval moves the run back to RUNNING in the same statement, so a poll
 * right after it sees the run going on. The first claim wins; anything else is told why it lost.
 */
export async function claimPlanDecision(
  pool: Pool,
  scope: RunScope & { waitpointId: string },
  decision: {
    approved: boolean;
    feedback?: string;
    /** The plan the decider saw: the claim holds only while the waitpoint's plan is this one. */
    expectedPlan?: unknown;
  },
  decider: Decider,
): Promise<WaitpointRow | DecisionMiss> {
  const expected = decision.expectedPlan === undefined ? null : JSON.stringify(decision.expectedPlan);
  const { rows } = await pool.query<WaitpointRow>(
    `WITH claimed AS (
       UPDATE "Waitpoint" w SET status = $5::"WaitpointStatus", feedback = $6, "resolvedAt" = now(),
              "decidedAt" = now(), "decidedByUserId" = $1, "decidedByApiKeyId" = $8,
              "decidedBySessionId" = $9, "decidedVia" = $10
         FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
        WHERE w.id = $4 AND w."runId" = r.id AND r.id = $3 AND r."chatId" = $2 AND c."userId" = $1
          AND c."deletedAt" IS NULL AND w.status = 'PENDING' AND r.status IN ${ACTIVE}
          AND r."cancelRequestedAt" IS NULL AND ($7::jsonb IS NULL OR w.plan = $7::jsonb)
        RETURNING w.id, w.status, w.plan, w.feedback, w."createdAt", w."resolvedAt", w."decidedByUserId",
                  w."decidedByApiKeyId", w."decidedBySessionId", w."decidedVia", w."decidedAt",
                  r."triggerRunId", r.id AS "runId"
     ), resumed AS (
       UPDATE "Run" r SET status = 'RUNNING', "updatedAt" = now()
         FROM claimed WHERE r.id = claimed."runId" AND claimed.status = 'APPROVED' AND r.status = 'WAITING'
     )
     SELECT id, status, plan, feedback, "createdAt", "resolvedAt", "decidedByUserId", "decidedByApiKeyId",
            "decidedBySessionId", "decidedVia", "decidedAt", "triggerRunId" FROM claimed`,
    [
      scope.userId,
      scope.chatId,
      scope.runId,
      scope.waitpointId,
      decision.approved ? 'APPROVED' : 'REJECTED',
      decision.feedback ?? null,
      expected,
      decider.apiKeyId ?? null,
      decider.sessionId ?? null,
      decider.via,
    ],
  );
  if (rows[0]) return rows[0];
  const found = await pool.query<{ status: WaitpointStatus; planChanged: boolean }>(
    `SELECT w.status, ($5::jsonb IS NOT NULL AND w.plan IS DISTINCT FROM $5::jsonb) AS "planChanged"
       FROM "Waitpoint" w JOIN "Run" r ON r.id = w."runId" JOIN "Chat" c ON c.id = r."chatId"
      WHERE w.id = $4 AND r.id = $3 AND r."chatId" = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    [scope.userId, scope.chatId, scope.runId, scope.waitpointId, expected],
  );
  const waitpoint = found.rows[0];
  if (!waitpoint) {
    const miss = await explainRunMiss(pool, scope);
    return miss === 'RUN_NOT_ACTIVE' ? 'WAITPOINT_NOT_FOUND' : miss;
  }
  // A decided waitpoint says so first: a repeated decision is a duplicate, whatever the run did since.
  if (waitpoint.status !== 'PENDING') return 'WAITPOINT_RESOLVED';
  if (waitpoint.planChanged) return 'PLAN_CHANGED';
  return 'RUN_NOT_ACTIVE';
}

/** What the reconciler needs of a run it may have to end. */
export interface UnfinishedRun {
  id: string;
  chatId: string;
  triggerRunId: string | null;
  text: string;
  cancelRequested: boolean;
}

const UNFINISHED_COLUMNS = `id, "chatId", "triggerRunId", text, "cancelRequestedAt" IS NOT NULL AS "cancelRequested"`;

/** A turn already admitted under this run id for this user (a keyed send's retry), or undefined. */
export async function selectAdmittedTurn(
  pool: Pool,
  userId: string,
  runId: string,
): Promise<{ chatId: string; messageId: string; triggerRunId: string | null } | undefined> {
  const { rows } = await pool.query<{ chatId: string; messageId: string; triggerRunId: string | null }>(
    `SELECT "chatId", "messageId", "triggerRunId" FROM "Run" WHERE id = $1 AND "userId" = $2`,
    [runId, userId],
  );
  return rows[0];
}

/** Which of these runs are still active. */
export async function listUnfinishedRuns(pool: Pool, runIds: string[]): Promise<UnfinishedRun[]> {
  const { rows } = await pool.query<UnfinishedRun>(
    `SELECT ${UNFINISHED_COLUMNS} FROM "Run" WHERE id = ANY($1::uuid[]) AND status IN ${ACTIVE}`,
    [runIds],
  );
  return rows;
}

/** A row that has not moved for this long is worth asking Temporal about… */
const STALE_AFTER_SECONDS = 120;
/** …at most this often per run (a plan may wait for approval for a day). */
const RECHECK_AFTER_SECONDS = 600;

/**
 * Active runs whose row has not moved for a while and was not checked lately. A QUEUED run no
 * execution has taken yet is the dispatcher's, not this.
 */
export async function listStaleRuns(pool: Pool, limit = 100): Promise<UnfinishedRun[]> {
  const { rows } = await pool.query<UnfinishedRun>(
    `SELECT ${UNFINISHED_COLUMNS} FROM "Run"
      WHERE status IN ${ACTIVE} AND NOT (status = 'QUEUED' AND "triggerRunId" IS NULL)
        AND "updatedAt" < now() - make_interval(secs => $1)
        AND ("checkedAt" IS NULL OR "checkedAt" < now() - make_interval(secs => $2))
      ORDER BY "updatedAt" LIMIT $3`,
    [STALE_AFTER_SECONDS, RECHECK_AFTER_SECONDS, limit],
  );
  return rows;
}

/** A run as its workflow's start names it (workflows/agent.contract.ts AgentRunInput adds settings). */
export interface RunIdentity {
  runId: string;
  chatId: string;
  userId: string;
  messageId: string;
  assistantMessageId: string;
  traceId: string;
  planMode: boolean;
}

/** An admitted run no execution has taken yet, with what its workflow's start needs. */
export interface QueuedRun extends RunIdentity {
  via: Transport;
  metadata: RunMetadata;
  /** Its cancel was recorded, or its chat deleted: it is ended, not started. */
  stopRequested: boolean;
}

/**
 * QUEUED head runs no execution has taken, admitted (or promoted from their chat's queue) more
 * than `graceSeconds` ago and not looked at in the last `recheckSeconds`, oldest first. A turn
 * still waiting in its chat's queue is not one: it starts when promoted.
 */
export async function selectQueuedRuns(
  pool: Pool,
  input: { graceSeconds: number; recheckSeconds: number; limit: number },
): Promise<QueuedRun[]> {
  const { rows } = await pool.query<QueuedRun>({
    name: 'runs-queued',
    text: `SELECT r.id AS "runId", r."chatId", r."userId", r."messageId", r."assistantMessageId", r."traceId",
                  r."planMode", r.via, r.metadata, r."cancelRequestedAt" IS NOT NULL OR c."deletedAt" IS NOT NULL AS "stopRequested"
             FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
            WHERE r.status = 'QUEUED' AND r."triggerRunId" IS NULL AND r."queueSeq" IS NULL
              AND COALESCE(r."promotedAt", r."createdAt") < now() - make_interval(secs => $1)
              AND (r."checkedAt" IS NULL OR r."checkedAt" < now() - make_interval(secs => $2))
            ORDER BY r."createdAt"
            LIMIT $3`,
    values: [input.graceSeconds, input.recheckSeconds, input.limit],
  });
  return rows;
}

/**
 * Whether the run still waits for an execution to take it: admitted (or promoted from its chat's
 * queue), not started by any, not ended.
 */
export async function runAwaitsStart(pool: Pool, runId: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'run-awaits-start',
    text: `SELECT 1 FROM "Run" WHERE id = $1 AND status = 'QUEUED' AND "triggerRunId" IS NULL AND "queueSeq" IS NULL`,
    values: [runId],
  });
  return rowCount === 1;
}

export async function markRunsChecked(pool: Pool, runIds: string[]): Promise<void> {
  if (runIds.length)
    await pool.query(`UPDATE "Run" SET "checkedAt" = now() WHERE id = ANY($1::uuid[])`, [runIds]);
}

/** One advisory lock for every process: a reconciler pass runs in one of them at a time. */
const RECONCILER_LOCK = 72_707_370;

/**
 * Runs `pass` while this process holds the reconciler's lock (a session lock, on a connection held
 * for the pass); null, without running it, when another process holds it.
 */
export async function underReconcilerLock<T>(pool: Pool, pass: () => Promise<T>): Promise<T | null> {
  const lock = await pool.connect();
  try {
    const { rows } = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      RECONCILER_LOCK,
    ]);
    if (!rows[0]?.locked) return null;
    try {
      return await pass();
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [RECONCILER_LOCK]);
    }
  } finally {
    lock.release();
  }
}

/** A decision claimed this long ago whose workflow has not acted on it may have lost its signal. */
const SIGNAL_GRACE_SECONDS = 10;

/**
 * Runs whose plan decision was claimed a while ago but shows no effect: an approved plan with no
 * tool call started since, or a rejected one whose run has not ended.
 */
export async function listRunsAwaitingSignal(pool: Pool): Promise<
  {
    runId: string;
    chatId: string;
    triggerRunId: string;
    waitpointId: string;
    approved: boolean;
    feedback: string | null;
  }[]
> {
  const { rows } = await pool.query(
    `SELECT r.id AS "runId", r."chatId", r."triggerRunId", w.id AS "waitpointId",
            w.status = 'APPROVED' AS approved, w.feedback
       FROM "Run" r JOIN "Waitpoint" w ON w."runId" = r.id
      WHERE r.status IN ('RUNNING', 'WAITING') AND r."triggerRunId" IS NOT NULL
        AND w.status IN ('APPROVED', 'REJECTED') AND w."resolvedAt" < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM "ToolCall" t WHERE t."runId" = r.id AND t."startedAt" >= w."resolvedAt")
      LIMIT 100`,
    [SIGNAL_GRACE_SECONDS],
  );
  return rows;
}

/**
 * Writes the chat (when new), the user message, its attachments (by id, and the rows of files
 * uploaded with the turn) and the QUEUED run as one statement, atomic without a transaction
 * round trip. The partial unique index on active runs decides a race between concurrent sends, in
 * any number of gateway processes: the loser's statement writes nothing and fails with a unique
 * violation. False: the chat named is not the user's (or is deleted).
 */
/**
 * `no-chat`: no such chat of the user. `chat-busy`: the chat has a run not yet terminal.
 * `at-cap`: the user has `maxActiveRuns` runs not yet terminal. `queue-full`: `maxQueued` turns
 * already wait in the chat's queue. Nothing is written but on admission.
 */
export type TurnAdmission =
  | {
      admitted: true;
      /**
       * The Temporal run id of the chat's previous run when that run ended within
       * `closingSeconds`: its execution may still be closing (it closes a workflow task after its
       * run ends), and the chat's next start cannot begin before it has.
       */
      closingExecution: string | null;
      /** The turn's place in the chat's queue (1 is next); null when it is the chat's head. */
      queuePosition: number | null;
      /** The runs whose cancel an interrupt recorded (see chat_turn_place). */
      cancelled: CancelledRun[];
    }
  | 'no-chat'
  | 'chat-busy'
  | 'at-cap'
  | 'queue-full';

export async function insertTurn(
  pool: Pool,
  turn: {
    runId: string;
    chatId: string;
    userId: string;
    /** Set for a new chat, null to continue an existing one. */
    newChatTitle: string | null;
    messageId: string;
    assistantMessageId: string;
    planMode: boolean;
    traceId: string;
    via: string;
    contentBlocks: ContentBlock[];
    attachmentIds: string[];
    uploads: readonly {
      id: string;
      storageKey: string;
      filename: string;
      mimeType: string;
      sizeBytes: bigint;
      status: string;
    }[];
    /** The user's cap on runs not yet terminal. */
    maxActiveRuns: number;
    /** How recently the chat's previous run must have ended to be named as closing. */
    closingSeconds: number;
    /** The send's metadata pairs. */
    metadata: RunMetadata;
    /** What the turn does when its chat already has one (see chat_turn_place). */
    onActiveRun: OnActiveRun;
    /** The chat's queue's cap. */
    maxQueued: number;
  } & RunSettingsInput,
): Promise<TurnAdmission> {
  // Rows inserted by one CTE are invisible to its siblings, so a new chat is inserted with its
  // last-message fields already set and only an existing chat is updated; the foreign keys are
  // checked at the end of the statement, when every row is in place.
  const { rows } = await pool.query<{
    admitted: number;
    chats: number;
    busy: boolean;
    closingExecution: string | null;
    outcome: string | null;
    position: number | null;
    cancelled: CancelledRun[] | null;
  }>({
    name: 'admit-turn',
    text: `WITH slot AS (
         -- Under a lock only this user's admissions take, held to this statement's commit, and
         -- counted on a snapshot taken after it (see the function's migration): racing sends
         -- cannot both take the last place. A run's ending frees its place by its status alone.
         SELECT 1 WHERE user_run_place_free($3, $12)
       ), new_chat AS (
         -- Only with a place: a send refused at the cap leaves no empty chat behind.
         INSERT INTO "Chat" (id, "userId", title, "lastMessageAt", "lastMessageId", "activityAt", "updatedAt")
         SELECT $2, $3, $4, now(), $5, now(), now() FROM slot WHERE $4::text IS NOT NULL
         RETURNING id, "agentSettings"
       ), existing AS (
         -- Locked, so a delete of the chat is ordered against this send: either the delete comes
         -- first and this finds no chat, or it waits and then cancels the run this admits.
         SELECT id, "agentSettings" FROM "Chat"
          WHERE $4::text IS NULL AND id = $2 AND "userId" = $3 AND "deletedAt" IS NULL
            FOR NO KEY UPDATE
       ), chat AS (
         SELECT id, "agentSettings" FROM new_chat
         UNION ALL
         SELECT id, "agentSettings" FROM existing
       ), place AS (
         -- A new chat's turn is its head; an existing chat's is placed under the chat's lock.
         SELECT 'head' AS outcome, NULL::bigint AS queue_seq, NULL::int AS "position", NULL::jsonb AS cancelled
          WHERE $4::text IS NOT NULL AND EXISTS (SELECT 1 FROM slot)
         UNION ALL
         -- A turn queued behind the chat's head needs no place under the user's cap (it runs nothing yet).
         SELECT * FROM chat_turn_place($2, $3, $20, $21, EXISTS (SELECT 1 FROM slot)) WHERE $4::text IS NULL
       ), run AS (
         INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", via,
                            settings, budget, metadata, "updatedAt", "queueSeq")
         SELECT $1, chat.id, $3, $5, $6, $7, $8, $13, ${runSettingsSql('chat', '$15', '$16', '$17')}, $18::jsonb, $19, now(),
                place.queue_seq
           FROM chat CROSS JOIN place
          WHERE place.outcome IN ('head', 'queued')
         RETURNING id
       ), ${runMetadataCte('tagged', 'run', '$3', '$19')}, msg AS (
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
       SELECT (SELECT count(*) FROM run)::int AS admitted, (SELECT count(*) FROM chat)::int AS chats,
              EXISTS (SELECT 1 FROM "Run" WHERE "chatId" = $2 AND status IN ('QUEUED', 'RUNNING', 'WAITING')) AS busy,
              (SELECT p."triggerRunId" FROM (
                 SELECT "triggerRunId", "finishedAt" FROM "Run" WHERE "chatId" = $2 AND id <> $1
                  ORDER BY "createdAt" DESC LIMIT 1
               ) p WHERE p."finishedAt" > now() - make_interval(secs => $14)) AS "closingExecution",
              place.outcome, place."position", place.cancelled
         FROM (SELECT 1) one LEFT JOIN place ON true`,
    values: [
      turn.runId,
      turn.chatId,
      turn.userId,
      turn.newChatTitle,
      turn.messageId,
      turn.assistantMessageId,
      turn.planMode,
      turn.traceId,
      JSON.stringify(turn.contentBlocks),
      turn.attachmentIds,
      JSON.stringify(turn.uploads.map((u) => ({ ...u, sizeBytes: u.sizeBytes.toString() }))),
      turn.maxActiveRuns,
      turn.via,
      turn.closingSeconds,
      ...runSettingsValues(turn),
      JSON.stringify(turn.metadata),
      turn.onActiveRun,
      turn.maxQueued,
    ],
  });
  const row = rows[0];
  if (row?.admitted)
    return {
      admitted: true,
      closingExecution: row.closingExecution,
      queuePosition: row.position,
      cancelled: row.cancelled ?? [],
    };
  if (row?.outcome === 'full') return 'queue-full';
  if (row?.outcome === 'busy') return 'chat-busy';
  // A new chat is only inserted with a place, so its absence here means the cap.
  if (!row?.chats && turn.newChatTitle === null) return 'no-chat';
  return row?.busy ? 'chat-busy' : 'at-cap';
}

/**
 * What admission resolves a run's settings from: the operator's `defaults`, then the chat's own
 * defaults, then the send's `settings` win, each key by key; maxSteps at most `maxStepsCap`.
 */
export interface RunSettingsInput {
  defaults: StoredRunSettings;
  settings: Partial<StoredRunSettings>;
  maxStepsCap: number;
  budget: StepContext['budget'];
}

/** RunSettingsInput as four statement parameters, in its order: runSettingsSql's and the budget. */
function runSettingsValues(input: RunSettingsInput): unknown[] {
  return [
    JSON.stringify(input.defaults),
    JSON.stringify(input.settings),
    input.maxStepsCap,
    input.budget === null ? null : JSON.stringify(input.budget),
  ];
}

/**
 * A run's settings as admission stores them (RunSettingsInput): the parameters `defaults`,
 * `settings` and `cap`, and chat `chat`'s own ("agentSettings").
 */
function runSettingsSql(chat: string, defaults: string, settings: string, cap: string): string {
  const merged = `(${defaults}::jsonb || ${chat}."agentSettings" || ${settings}::jsonb)`;
  return `jsonb_set(${merged}, '{maxSteps}', to_jsonb(LEAST((${merged}->>'maxSteps')::int, ${cap}::int)))`;
}

/**
 * A CTE inserting the metadata pairs (`metadata`, jsonb) of the run CTE `run` inserted, one
 * "RunMetadata" row each, dated as the run (now(), the statement's time, is its "createdAt").
 */
function runMetadataCte(name: string, run: string, userId: string, metadata: string): string {
  return `${name} AS (
         INSERT INTO "RunMetadata" ("runId", "userId", key, value, "createdAt")
         SELECT ${run}.id, ${userId}, pair.key, pair.value, now()
           FROM ${run}, jsonb_each_text(${metadata}::jsonb) AS pair(key, value))`;
}

/**
 * `no-message`: the chat has no such message (a user message, an answer, or the answer a run was
 * to give). `not-latest`: the message is not the chat's latest user message's (or its answers').
 */
export type RegenerationAdmission = TurnAdmission | 'no-message' | 'not-latest';

/**
 * Admits a run answering a user message again, in one statement as insertTurn admits a turn (the
 * user's place, the chat locked against its delete, the partial unique index deciding a race with
 * a send): the run names the message its earlier runs answered, and nothing else is written, so
 * the earlier answer stays. The message is the chat's latest user message: a regenerated answer
 * becomes the latest message, and an earlier turn's would land after later turns. It may be named
 * by the user message's id, by one of its answers', or by the `assistantMessageId` of a run of it
 * that gave none (it failed or was cancelled).
 */
export async function insertRegeneration(
  pool: Pool,
  input: {
    runId: string;
    chatId: string;
    userId: string;
    /** The message named: see above. */
    messageId: string;
    assistantMessageId: string;
    planMode: boolean;
    traceId: string;
    via: string;
    metadata: RunMetadata;
    maxActiveRuns: number;
    closingSeconds: number;
  } & RunSettingsInput,
): Promise<{ admission: RegenerationAdmission; userMessageId: string | null }> {
  const { rows } = await pool.query<{
    admitted: number;
    chats: number;
    target: string | null;
    latest: string | null;
    busy: boolean;
    closingExecution: string | null;
  }>({
    name: 'admit-regeneration',
    text: `WITH slot AS (
         SELECT 1 WHERE user_run_place_free($3, $11)
       ), chat AS (
         SELECT id, "agentSettings" FROM "Chat"
          WHERE id = $2 AND "userId" = $3 AND "deletedAt" IS NULL FOR NO KEY UPDATE
       ), target AS (
         SELECT u.id FROM chat JOIN "Message" u ON u."chatId" = chat.id AND u.role = 'user'
          WHERE u.id = $4
             OR u.id = (SELECT a."replyToId" FROM "Message" a WHERE a.id = $4 AND a."chatId" = chat.id)
             OR u.id = (SELECT r."messageId" FROM "Run" r WHERE r."assistantMessageId" = $4 AND r."chatId" = chat.id)
       ), latest AS (
         SELECT (SELECT l.id FROM "Message" l WHERE l."chatId" = chat.id AND l.role = 'user'
                  ORDER BY l."createdAt" DESC, l.id DESC LIMIT 1) AS id
           FROM chat
       ), run AS (
         INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", via,
                            settings, budget, metadata, "updatedAt")
         SELECT $1, chat.id, $3, target.id, $5, $6, $7, $8, ${runSettingsSql('chat', '$12', '$13', '$14')},
                $15::jsonb, $9, now()
           FROM chat, target, latest, slot WHERE latest.id = target.id
         RETURNING id
       ), ${runMetadataCte('tagged', 'run', '$3', '$9')}
       SELECT (SELECT count(*) FROM run)::int AS admitted, (SELECT count(*) FROM chat)::int AS chats,
              (SELECT id FROM target) AS target, (SELECT id FROM latest) AS latest,
              EXISTS (SELECT 1 FROM "Run" WHERE "chatId" = $2 AND status IN ('QUEUED', 'RUNNING', 'WAITING')) AS busy,
              (SELECT p."triggerRunId" FROM (
                 SELECT "triggerRunId", "finishedAt" FROM "Run" WHERE "chatId" = $2 AND id <> $1
                  ORDER BY "createdAt" DESC, id DESC LIMIT 1
               ) p WHERE p."finishedAt" > now() - make_interval(secs => $10)) AS "closingExecution"`,
    values: [
      input.runId,
      input.chatId,
      input.userId,
      input.messageId,
      input.assistantMessageId,
      input.planMode,
      input.traceId,
      input.via,
      JSON.stringify(input.metadata),
      input.closingSeconds,
      input.maxActiveRuns,
      ...runSettingsValues(input),
    ],
  });
  const row = rows[0];
  const userMessageId = row?.target ?? null;
  if (row?.admitted)
    return {
      admission: {
        admitted: true,
        closingExecution: row.closingExecution,
        queuePosition: null,
        cancelled: [],
      },
      userMessageId,
    };
  if (!row?.chats) return { admission: 'no-chat', userMessageId };
  if (!row.target) return { admission: 'no-message', userMessageId };
  if (row.target !== row.latest) return { admission: 'not-latest', userMessageId };
  return { admission: row.busy ? 'chat-busy' : 'at-cap', userMessageId };
}

/** The user's attachments among these ids. */
export async function selectOwnAttachments(
  pool: Pool,
  userId: string,
  ids: string[],
): Promise<{ id: string; storageKey: string; mimeType: string }[]> {
  const { rows } = await pool.query<{ id: string; storageKey: string; mimeType: string }>(
    `SELECT id, "storageKey", "mimeType" FROM "Attachment" WHERE id = ANY($1::uuid[]) AND "userId" = $2`,
    [ids, userId],
  );
  return rows;
}

/**
 * What the run's step or tool call waits for before its next attempt (migration run_retry_wait),
 * or null once it moves again: one statement, writing nothing when it is already so, or when the
 * run is no longer running.
 */
export async function setRunRetryWait(
  pool: Pool,
  runId: string,
  wait: Record<string, unknown> | null,
): Promise<void> {
  await pool.query({
    name: 'run-retry-wait',
    text: `UPDATE "Run" SET "retryWait" = $2::jsonb
            WHERE id = $1 AND status = 'RUNNING' AND "retryWait" IS DISTINCT FROM $2::jsonb`,
    values: [runId, wait === null ? null : JSON.stringify(wait)],
  });
}

/** Run `r` as toRunSnapshot reads it: the row, its tool calls, waitpoints, webhooks and wait. */
export const RUN_SNAPSHOT_JSON = `to_jsonb(r) || jsonb_build_object(
    -- The last stream event this read reflects: the stream goes on after it.
    'eventSeq', COALESCE((SELECT s.seq FROM "RunEventSeq" s WHERE s."runId" = r.id), 0),
    'toolCalls', COALESCE((SELECT jsonb_agg(jsonb_build_object(
        'id', t.id, 'toolName', t."toolName", 'status', t.status, 'input', t.input,
        'result', t.result, 'error', t.error, 'startedAt', t."startedAt", 'finishedAt', t."finishedAt")
      ORDER BY t."startedAt", t.id) FROM "ToolCall" t WHERE t."runId" = r.id), '[]'::jsonb),
    'waitpoints', COALESCE((SELECT jsonb_agg(${WAITPOINT_JSON}
      ORDER BY w."createdAt", w.id) FROM "Waitpoint" w WHERE w."runId" = r.id), '[]'::jsonb),
    'usage', ${runUsageSql('r.id')},
    'stepUsage', ${runStepUsageSql('r.id')},
    'webhooks', ${RUN_WEBHOOKS_JSON},
    'waitingFor', ${WAITING_FOR_JSON})`;

/**
 * A run with its tool calls and waitpoints, in one indexed statement scoped to the caller's chat.
 * Undefined: no such chat of the caller; `run` null: the chat has no such run.
 */
export async function selectRunSnapshot(
  pool: Pool,
  scope: RunScope,
): Promise<{ run: Record<string, unknown> | null } | undefined> {
  const { rows } = await pool.query<{ run: Record<string, unknown> | null }>({
    name: 'run-snapshot',
    text: `SELECT true AS "chatFound",
            (SELECT ${RUN_SNAPSHOT_JSON} FROM "Run" r WHERE r.id = $3 AND r."chatId" = c.id) AS run
       FROM "Chat" c
      WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    values: [scope.userId, scope.chatId, scope.runId],
  });
  return rows[0];
}

/**
 * A chat as its stream starts it: its unfinished runs (the head, then its queue in order), each as
 * selectRunSnapshot reads it, and the number of the chat's last event, read by one statement, so
 * the events after that number are exactly what the snapshot does not show yet. Undefined when the
 * chat is not the caller's. Each part reads a partial index of the chat's unfinished runs.
 */
export async function selectChatSnapshot(
  pool: Pool,
  scope: ChatScope,
): Promise<{ eventSeq: string; runs: Record<string, unknown>[] } | undefined> {
  const { rows } = await pool.query<{ eventSeq: string; runs: Record<string, unknown>[] }>({
    name: 'chat-snapshot',
    text: `SELECT COALESCE((SELECT s.seq FROM "ChatEventSeq" s WHERE s."chatId" = c.id), 0) AS "eventSeq",
                  COALESCE((SELECT jsonb_agg(${RUN_SNAPSHOT_JSON} ORDER BY r."queueSeq" NULLS FIRST)
                              FROM (SELECT * FROM "Run" WHERE "chatId" = c.id AND status IN ${ACTIVE} AND "queueSeq" IS NULL
                                    UNION ALL
                                    SELECT * FROM "Run" WHERE "chatId" = c.id AND status = 'QUEUED' AND "queueSeq" IS NOT NULL) r),
                           '[]'::jsonb) AS runs
             FROM "Chat" c
            WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    values: [scope.userId, scope.chatId],
  });
  return rows[0];
}

/**
 * The chat's run events after number `after`, oldest first, and the number of its last event, read
 * by one statement (see migration chat_events: a chat's events are numbered without a gap, so a
 * first event past `after + 1`, or none while the last is past `after`, means the ones between
 * were pruned). Undefined when the chat is not the caller's (or was deleted).
 */
export async function selectChatEvents(
  pool: Pool,
  scope: ChatScope,
  after: number,
  limit: number,
): Promise<{ lastSeq: string; events: (RunEventRow & { runId: string })[] } | undefined> {
  const { rows } = await pool.query<{ lastSeq: string; events: (RunEventRow & { runId: string })[] }>({
    name: 'chat-events',
    text: `SELECT COALESCE((SELECT s.seq FROM "ChatEventSeq" s WHERE s."chatId" = c.id), 0) AS "lastSeq",
                  COALESCE((SELECT jsonb_agg(jsonb_build_object('runId', e."runId", 'seq', e.seq, 'type', e.type, 'data', e.data)
                                    ORDER BY e.seq)
                              FROM (SELECT * FROM "RunEvent" WHERE "chatId" = c.id AND seq > $3 ORDER BY seq LIMIT $4) e),
                           '[]'::jsonb) AS events
             FROM "Chat" c
            WHERE c.id = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    values: [scope.userId, scope.chatId, after, limit],
  });
  return rows[0];
}

export interface RunEventRow {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * The run's stream events after `after` (see migration run_events), oldest first, with the run's
 * status read by the same statement: a terminal status with no event left means the stream is
 * over. Undefined when the run is not one of the caller's.
 */
export async function selectRunEvents(
  pool: Pool,
  scope: RunScope,
  after: number,
  limit: number,
): Promise<{ status: string; events: RunEventRow[]; pruned: boolean } | undefined> {
  const { rows } = await pool.query<{ status: string; events: RunEventRow[]; pruned: boolean }>({
    name: 'run-events',
    // A finished run has at least its terminal status event: none left means they were pruned.
    text: `SELECT r.status::text AS status,
                  (r."finishedAt" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "RunEvent" WHERE "runId" = r.id)) AS pruned,
                  COALESCE((SELECT jsonb_agg(jsonb_build_object('seq', e.seq, 'type', e.type, 'data', e.data) ORDER BY e.seq)
                              FROM (SELECT * FROM "RunEvent" WHERE "runId" = r.id AND seq > $4 ORDER BY seq LIMIT $5) e),
                           '[]'::jsonb) AS events
             FROM "Run" r JOIN "Chat" c ON c.id = r."chatId"
            WHERE r.id = $3 AND r."chatId" = $2 AND c."userId" = $1 AND c."deletedAt" IS NULL`,
    values: [scope.userId, scope.chatId, scope.runId, after, limit],
  });
  return rows[0];
}

/**
 * Deletes the live-stream events of a batch of runs that ended longer than `$1` ms ago, each run's
 * all at once (a resume then finds none and gets the final snapshot, never a stream with a gap).
 * The runs are found by their oldest events (RunEvent_createdAt_idx): no event of a run is older
 * than the run's ending, so only an event created before the cutoff can belong to such a run, and
 * what is read is what is deleted (and the events of runs still going that began before it). The
 * event counter stays: a snapshot still names its last event. Answers the events deleted.
 */
export async function pruneRunEvents(pool: Pool, retentionMs: number, batch: number): Promise<number> {
  const { rowCount } = await pool.query({
    name: 'prune-run-events',
    text: `DELETE FROM "RunEvent" WHERE "runId" = ANY(ARRAY(
             SELECT DISTINCT old."runId" FROM (
               SELECT e."runId" FROM "RunEvent" e
                WHERE e."createdAt" < ${CUTOFF}
                  AND EXISTS (SELECT 1 FROM "Run" r WHERE r.id = e."runId" AND r."finishedAt" < ${CUTOFF})
                ORDER BY e."createdAt" LIMIT $2) old))`,
    values: [retentionMs, batch],
  });
  return rowCount ?? 0;
}
