import type { Pool } from 'pg';
import type { Transport } from '../schemas/common';
import type { OnActiveRun } from '../schemas/runs';
import { metadataKeywords, type RunMetadata } from '../schemas/metadata';
import type { RunIdentity } from './store';
import { SUPERSEDED_PROBE } from '../chats/store';

/**
 * A chat's queue of turns (migration run_queue): the SQL that places a turn, promotes the next one
 * when the head ends, and repairs a line that stalled. The decisions themselves live in the
 * migration's functions, which take the chat's row lock and read after it.
 */

export type { OnActiveRun };

/**
 * Message `m` is one a model reads (the step's history, a compaction): not an answer a regenerate
 * replaced (NOT_SUPERSEDED), nor a turn still waiting in its chat's queue (not said yet). One
 * expression, its second probe only when the first found nothing: the planner weighs it as one
 * filter, and keeps walking the index on (chatId, createdAt, id) to its LIMIT. The second names
 * the chat's queue (Run_chat_queue_idx), empty in most chats, rather than the message's run.
 */
export const MODEL_READS = (m: string) => `COALESCE(${SUPERSEDED_PROBE(m)}, (
  SELECT false FROM "Run" q
   WHERE q."chatId" = ${m}."chatId" AND q.status = 'QUEUED' AND q."queueSeq" IS NOT NULL AND q.id = ${m}."runId"), true)`;

/** A run whose cancel an interrupt (or a chat's deletion) recorded. */
export interface CancelledRun {
  runId: string;
  triggerRunId: string | null;
  /** It waited in the chat's queue: no execution has it, and its canceller ends it. */
  queued: boolean;
}

/**
 * A turn that has just become its chat's head: what its workflow's start needs, its metadata for
 * the execution's memo and its AgentRunMetadata keywords (metadataKeywords) for its search attribute.
 */
export type PromotedRun = RunIdentity & { via: Transport; metadata: RunMetadata; metadataKeywords: string[] };

/** A Run row, as to_jsonb gives it, as its start needs it. */
export function toPromotedRun(row: Record<string, unknown>): PromotedRun {
  return {
    runId: row.id as string,
    chatId: row.chatId as string,
    userId: row.userId as string,
    messageId: row.messageId as string,
    assistantMessageId: row.assistantMessageId as string,
    traceId: row.traceId as string,
    planMode: row.planMode as boolean,
    via: row.via as Transport,
    metadata: (row.metadata ?? {}) as RunMetadata,
    metadataKeywords: metadataKeywords((row.metadata ?? {}) as RunMetadata),
  };
}

/** finishRun's CTE: the chat's next turn made its head once the ended run (`fin`) was its head. */
export const PROMOTED_CTE = `promoted AS (SELECT p.* FROM fin, LATERAL run_promote_next(fin."chatId") p)`;

/**
 * For a run `r` found already ended: its chat's head when that head was promoted from the queue and
 * no execution has taken it yet (the ending that promoted it was this very caller's, retried).
 */
export const UNTAKEN_PROMOTED_JSON = `(SELECT to_jsonb(p) FROM "Run" p
    WHERE p."chatId" = r."chatId" AND p.status = 'QUEUED' AND p."queueSeq" IS NULL
      AND p."triggerRunId" IS NULL AND p."promotedAt" IS NOT NULL)`;

/**
 * For a run found already ended by its own execution (a retry after its ending committed): the
 * turn that ending promoted, should no execution have taken it yet.
 */
export async function selectUntakenPromoted(pool: Pool, runId: string): Promise<PromotedRun | null> {
  const { rows } = await pool.query<{ next: Record<string, unknown> | null }>(
    `SELECT ${UNTAKEN_PROMOTED_JSON} AS next FROM "Run" r WHERE r.id = $1`,
    [runId],
  );
  const next = rows[0]?.next;
  return next ? toPromotedRun(next) : null;
}

/**
 * Chats whose line stalled: turns queued for more than `graceSeconds` and no head (their head was
 * ended by something that did not promote, an older release's ending for one). Each gets its next
 * turn promoted, under its lock; the promoted runs are returned, to be started.
 */
export async function promoteStalledQueues(pool: Pool, graceSeconds: number): Promise<PromotedRun[]> {
  const { rows } = await pool.query<{ run: Record<string, unknown> }>({
    name: 'runs-promote-stalled',
    text: `SELECT to_jsonb(p) AS run
             FROM (SELECT DISTINCT q."chatId" FROM "Run" q
                    WHERE q.status = 'QUEUED' AND q."queueSeq" IS NOT NULL AND q."cancelRequestedAt" IS NULL
                      AND q."updatedAt" < now() - make_interval(secs => $1)
                      AND NOT EXISTS (SELECT 1 FROM "Run" h WHERE h."chatId" = q."chatId"
                                         AND h.status IN ('QUEUED', 'RUNNING', 'WAITING') AND h."queueSeq" IS NULL)
                    LIMIT 50) stalled,
                  LATERAL run_promote_next(stalled."chatId") p`,
    values: [graceSeconds],
  });
  return rows.map((r) => toPromotedRun(r.run));
}

/**
 * Queued turns whose cancel was recorded more than `graceSeconds` ago and that are still QUEUED:
 * their canceller (an interrupt, a cancel, a chat's deletion) died before it ended them.
 */
export async function selectCancelledQueuedRuns(pool: Pool, graceSeconds: number): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>({
    name: 'runs-cancelled-queued',
    text: `SELECT id FROM "Run"
            WHERE status = 'QUEUED' AND "queueSeq" IS NOT NULL
              AND "cancelRequestedAt" < now() - make_interval(secs => $1)
            LIMIT 50`,
    values: [graceSeconds],
  });
  return rows.map((r) => r.id);
}

/** The run's place in its chat's queue (1 is next), or null when it is not waiting there. */
export async function selectQueuePosition(pool: Pool, runId: string): Promise<number | null> {
  const { rows } = await pool.query<{ position: number | null }>(
    `SELECT ${QUEUE_POSITION('r')} AS position FROM "Run" r WHERE r.id = $1`,
    [runId],
  );
  return rows[0]?.position ?? null;
}

/** The place of run `alias` in its chat's queue, 1 is next; null when not queued. */
const QUEUE_POSITION = (
  alias: string,
) => `CASE WHEN ${alias}.status = 'QUEUED' AND ${alias}."queueSeq" IS NOT NULL
    AND ${alias}."cancelRequestedAt" IS NULL THEN (
      SELECT count(*)::int FROM "Run" q
       WHERE q."chatId" = ${alias}."chatId" AND q.status = 'QUEUED' AND q."queueSeq" IS NOT NULL
         AND q."cancelRequestedAt" IS NULL AND q."queueSeq" <= ${alias}."queueSeq") END`;

/**
 * What run `r` waits for, as the snapshot shows it (null while it is moving, or over): its plan's
 * decision, a provider's retry or a tool-call slot (its `retryWait`), or its place in the chat's
 * queue.
 */
export const WAITING_FOR_JSON = `CASE
    WHEN r."cancelRequestedAt" IS NOT NULL THEN NULL
    WHEN r.status = 'RUNNING' THEN r."retryWait"
    WHEN r.status = 'WAITING' THEN (
      SELECT jsonb_build_object('kind', 'plan_approval', 'waitpointId', w.id, 'expiresAt',
                                to_char(w."expiresAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        FROM "Waitpoint" w WHERE w."runId" = r.id AND w.status = 'PENDING' ORDER BY w."createdAt" DESC LIMIT 1)
    WHEN r.status = 'QUEUED' AND r."queueSeq" IS NOT NULL
      THEN jsonb_build_object('kind', 'queue', 'position', ${QUEUE_POSITION('r')})
  END`;
