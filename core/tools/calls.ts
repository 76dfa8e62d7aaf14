import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { z } from 'zod';
import type { ToolResult } from '../schemas/events';
import {
  deliveriesColumn,
  eventCte,
  toRecorded,
  type DeliveryRow,
  type RecordedDelivery,
} from '../webhooks/store';
import type { RunToolInput } from './types';
import { runCreditsSql } from '../runs/model-calls';

/** Where a call's statements run: the pool, or the connection a first attempt holds the call on. */
export type Queryable = Pool | PoolClient;

/** A tool call's row as every attempt of it sees it. */
export interface StoredToolCall {
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  result: ToolResult | null;
  error: string | null;
  /** The failure's type, when the attempt that failed it knew one. */
  errorCode: string | null;
}

/**
 * What opening a call found. `opened`: the row was written now, its price reserved and a slot of
 * the user's active calls taken. `existing`: an earlier attempt wrote it (nothing taken again).
 * `run-ended`: the run is no longer active. `no-credits`: the balance cannot pay the price.
 * `at-cap`: the user has `maxActive` calls running. Nothing is written but on `opened`.
 */
export type OpenedToolCall =
  | { outcome: 'opened' | 'existing'; call: StoredToolCall }
  | { outcome: 'run-ended' }
  | { outcome: 'no-credits' }
  | { outcome: 'at-cap' }
  /** The run's settings do not offer this tool. */
  | { outcome: 'not-allowed' }
  /** The run's budget cannot take another call (`maxToolCalls`) or this price (`maxCredits`). */
  | { outcome: 'over-budget'; limit: 'maxToolCalls' | 'maxCredits'; budget: string };

const PG_UNIQUE_VIOLATION = '23505';

/**
 * Writes the call's row once (RUNNING) and answers its state: a retried attempt finds its own.
 * The row, its price taken from the user's balance (`creditReserved`) and a slot of the user's
 * active calls are one statement: the user's row is re-checked on its latest version, so racing
 * calls cannot overdraw the balance or pass the cap, and the call's end settles both (trigger
 * tool_call_ended_settle: a success keeps its cost, a failure is refunded whole).
 * A call of a run opens only while the run is active and no cancel was asked for, under a share
 * lock of the run's row, so it is ordered against the statement that ends the run: a run that has
 * ended (or is ending) starts no tool, and a tool it started is closed with it. It opens only when
 * the run's settings offer the tool and its budget takes one more call at this price (its calls
 * so far, and its credits spent and held: runCreditsSql); a run's calls come one at a time.
 */
export async function openToolCall(
  pool: Queryable,
  input: RunToolInput & { price: string; maxActive: number },
): Promise<OpenedToolCall> {
  const query = {
    name: 'tool-call-open',
    text: `WITH run AS (
             SELECT id, settings, budget FROM "Run"
              WHERE id = $4 AND status IN ('RUNNING', 'WAITING') AND "cancelRequestedAt" IS NULL
                FOR SHARE
           ), prior AS (
             SELECT status, result, error, "errorCode" FROM "ToolCall" WHERE id = $1
           ), refusal AS (
             SELECT CASE
                      WHEN run.settings IS NOT NULL AND NOT (run.settings->'tools') ? $5 THEN 'not-allowed'
                      WHEN (run.budget->>'maxToolCalls')::int
                           <= (SELECT count(*) FROM "ToolCall" t WHERE t."runId" = run.id) THEN 'maxToolCalls'
                      WHEN (run.budget->>'maxCredits')::numeric < ${runCreditsSql('run.id')} + $7::numeric
                        THEN 'maxCredits'
                    END AS reason,
                    run.budget
               FROM run
           ), slot AS (
             UPDATE "User" u SET "activeToolCalls" = u."activeToolCalls" + 1,
                    "creditBalance" = u."creditBalance" - $7::numeric
              WHERE u.id = $2 AND NOT EXISTS (SELECT 1 FROM prior)
                AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM run))
                AND NOT EXISTS (SELECT 1 FROM refusal WHERE reason IS NOT NULL)
                AND u."activeToolCalls" < $8 AND u."creditBalance" >= $7::numeric
             RETURNING u.id
           ), opened AS (
             INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input, "creditReserved", via)
             SELECT $1, $2, $3, $4, $5, 'RUNNING', $6::jsonb, $7::numeric,
                    COALESCE($9, (SELECT r.via FROM "Run" r WHERE r.id = $4), 'rest') FROM slot
             RETURNING status, result, error, "errorCode")
           SELECT 'opened' AS outcome, status, result, error, "errorCode", NULL::jsonb AS budget FROM opened
           UNION ALL
           SELECT 'existing', status, result, error, "errorCode", NULL FROM prior
           UNION ALL
           SELECT CASE WHEN $4::uuid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM run) THEN 'run-ended'
                       WHEN (SELECT reason FROM refusal) IS NOT NULL THEN (SELECT reason FROM refusal)
                       WHEN u."creditBalance" < $7::numeric THEN 'no-credits'
                       ELSE 'at-cap' END, NULL, NULL, NULL, NULL, (SELECT budget FROM refusal)
             FROM "User" u
            WHERE u.id = $2 AND NOT EXISTS (SELECT 1 FROM opened) AND NOT EXISTS (SELECT 1 FROM prior)`,
    values: [
      input.toolCallId,
      input.userId,
      input.chatId ?? null,
      input.runId ?? null,
      input.toolName,
      JSON.stringify(input.input ?? {}),
      input.price,
      input.maxActive,
      input.via ?? null,
    ],
  };
  type Row = StoredToolCall & {
    outcome: OpenedToolCall['outcome'] | 'maxToolCalls' | 'maxCredits';
    budget: { maxCredits?: string; maxToolCalls?: number } | null;
  };
  const rows = await pool.query<Row>(query).then(
    (r) => r.rows,
    // Two attempts of one call opening at once: the second finds the first's row.
    async (err: unknown) => {
      if ((err as { code?: string }).code !== PG_UNIQUE_VIOLATION) throw err;
      return (await pool.query<Row>(query)).rows;
    },
  );
  const row = rows[0];
  if (!row) return { outcome: 'run-ended' };
  const { outcome, budget, ...call } = row;
  if (outcome === 'opened' || outcome === 'existing') return { outcome, call };
  if (outcome === 'maxToolCalls' || outcome === 'maxCredits') {
    return { outcome: 'over-budget', limit: outcome, budget: String(budget?.[outcome] ?? '') };
  }
  if (outcome === 'over-budget') return { outcome: 'run-ended' };
  return { outcome };
}

/** What a user may start now: for a direct call's quick answer before its workflow starts. */
export async function selectToolAllowance(
  pool: Pool,
  userId: string,
  price: string,
): Promise<{ activeToolCalls: number; canPay: boolean } | undefined> {
  const { rows } = await pool.query<{ activeToolCalls: number; canPay: boolean }>(
    'SELECT "activeToolCalls", "creditBalance" >= $2::numeric AS "canPay" FROM "User" WHERE id = $1',
    [userId, price],
  );
  return rows[0];
}

export async function readToolCall(pool: Pool, toolCallId: string): Promise<StoredToolCall | undefined> {
  const { rows } = await pool.query<StoredToolCall>(
    `SELECT status, result, error, "errorCode" FROM "ToolCall" WHERE id = $1`,
    [toolCallId],
  );
  return rows[0];
}

/** RUNNING → FAILED, with the failure's type when known; a call that has already finished is left alone. */
export async function markToolCallFailed(
  pool: Queryable,
  toolCallId: string,
  error: string,
  errorCode?: string | null,
): Promise<void> {
  await pool.query(
    `UPDATE "ToolCall" SET status = 'FAILED', error = $2, "errorCode" = $3, "finishedAt" = now()
      WHERE id = $1 AND status = 'RUNNING'`,
    [toolCallId, error, errorCode ?? null],
  );
}

/**
 * RUNNING → SUCCEEDED with its result, its one charge (keyed by the call) and its tool.completed
 * event, in one statement: a call is charged, and announced, exactly when it succeeded, even if its
 * run is cancelled right after. Answers the result as the row holds it (every reader of the call
 * then sees the same object, keys in the same order), and the deliveries to start. Null when the
 * call had stopped RUNNING meanwhile (another attempt finished it, or its run ended and closed
 * it): nothing is charged then.
 */
export async function recordToolSuccess(
  pool: Queryable,
  input: { toolCallId: string; userId: string; result: ToolResult },
): Promise<{ result: ToolResult; deliveries: RecordedDelivery[] } | null> {
  const { result } = input;
  const { rows } = await pool.query<{ result: ToolResult; deliveries: DeliveryRow[] }>({
    name: 'tool-call-succeeded',
    text: `WITH done AS (
             UPDATE "ToolCall" SET status = 'SUCCEEDED', result = $2::jsonb, "providerRunId" = $3, "creditCost" = $4,
                    "durationMs" = $5, "finishedAt" = now(), error = NULL
              WHERE id = $1 AND status = 'RUNNING'
             RETURNING *
           ), charged AS (
             INSERT INTO "CreditLedgerEntry" (id, "userId", "toolCallId", amount, reason)
             SELECT $6, done."userId", done.id, $4, 'tool:' || done."toolName" FROM done
             ON CONFLICT ("toolCallId") DO NOTHING
           ), ${eventCte('announced', {
             from: 'done',
             userId: 's."userId"',
             event: `'tool.completed'`,
             key: 's.id',
             data: `s.result || jsonb_build_object('toolCallId', s.id)
                    || jsonb_strip_nulls(jsonb_build_object('chatId', s."chatId", 'runId', s."runId"))`,
           })}
           SELECT done.result, ${deliveriesColumn('announced')} AS deliveries FROM done`,
    values: [
      input.toolCallId,
      JSON.stringify(result),
      result.providerRunId,
      result.creditCost,
      result.durationMs,
      randomUUID(),
    ],
  });
  const row = rows[0];
  return row ? { result: row.result, deliveries: toRecorded(input.userId, row.deliveries) } : null;
}

/**
 * A direct call of a quick tool, offered by the gateway that has just started its workflow to the
 * workers of that workflow's queue, which run it at once instead of after the workflow's first task
 * (activities/tools.ts, createToolFirstAttempts). The offer is the call itself, its input as the
 * call's row stores it: its row is written by whoever runs it first.
 */
export interface ToolOffer {
  taskQueue: string;
  call: RunToolInput & { offered: true };
}

/** An offer as a worker hears it: with the time PostgreSQL sent it, on PostgreSQL's clock. */
export interface HeardToolOffer {
  offeredAt: string;
  offer: ToolOffer;
}

const heardToolOfferSchema = z.object({
  offeredAt: z.string(),
  offer: z.object({
    taskQueue: z.string(),
    call: z.object({
      toolCallId: z.string().min(1),
      toolName: z.string(),
      input: z.unknown(),
      userId: z.string().min(1),
      via: z.enum(['rest', 'mcp', 'console']).optional(),
      offered: z.literal(true),
    }),
  }),
});

/** PostgreSQL refuses a notification's payload of 8000 bytes or more; the stamp takes about 60. */
const MAX_OFFER_BYTES = 7_900;

/** The offer as it goes out, or undefined when it is too large to notify (the workflow runs it then). */
export function toolOfferPayload(offer: ToolOffer): string | undefined {
  const payload = JSON.stringify(offer);
  return Buffer.byteLength(payload) > MAX_OFFER_BYTES ? undefined : payload;
}

/**
 * Sends an offer to every worker listening on `tool_offers`, stamped with PostgreSQL's clock (the
 * one a worker's hold compares it with): a notification, so nothing is stored. As `json`, the offer
 * goes out as it was written, so the stamp adds its own few dozen bytes only.
 */
export async function offerToolCall(pool: Pool, payload: string): Promise<void> {
  await pool.query({
    name: 'tool-call-offer',
    text: `SELECT pg_notify('tool_offers', json_build_object('offeredAt', clock_timestamp(), 'offer', $1::json)::text)`,
    values: [payload],
  });
}

/** An offer as a worker heard it, or undefined for anything that is not one. */
export function parseToolOffer(payload: string): HeardToolOffer | undefined {
  try {
    const parsed = heardToolOfferSchema.safeParse(JSON.parse(payload));
    return parsed.success ? (parsed.data as HeardToolOffer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The advisory locks of tool calls, keyed by this class and the hash of the call's id: apart from
 * every other lock, and a collision of two calls' hashes only makes one wait for the other.
 */
const FIRST_ATTEMPT_LOCK_CLASS = 20261206;

/**
 * Holds the call for a first attempt: a session lock on a connection of its own, on which the
 * attempt's own statements run too, so an attempt takes one connection and a worker that dies
 * mid-attempt lets go of the call with it. `held` when another attempt holds it already, `stale`
 * when the offer is older than `freshMs` on PostgreSQL's clock: an offer heard that late is left to
 * the workflow, which may have opened, or given up on, the call meanwhile. `release` lets go; a
 * connection that cannot unlock is closed, which lets go too.
 */
export async function holdToolCall(
  pool: Pool,
  heard: { toolCallId: string; offeredAt: string; freshMs: number },
): Promise<{ client: PoolClient; release(): Promise<void> } | 'held' | 'stale'> {
  const client = await pool.connect();
  const key = [FIRST_ATTEMPT_LOCK_CLASS, heard.toolCallId];
  let held: 'now' | 'held' | 'stale' = 'stale';
  try {
    // CASE, so a stale offer never takes the lock (the operands of AND have no order).
    const { rows } = await client.query<{ held: boolean | null }>(
      `SELECT CASE WHEN clock_timestamp() - $3::timestamptz <= $4 * interval '1 millisecond'
                   THEN pg_try_advisory_lock($1, hashtext($2)) END AS held`,
      [...key, heard.offeredAt, heard.freshMs],
    );
    const answer = rows[0]?.held;
    held = answer === true ? 'now' : answer === false ? 'held' : 'stale';
  } finally {
    if (held !== 'now') client.release();
  }
  if (held !== 'now') return held;
  // Checked out, the client has no listener of the pool's: a connection lost meanwhile (the
  // server restarted, or ended this session) would otherwise be an unhandled error in the worker.
  let lost: Error | undefined;
  const onLost = (err: Error) => (lost = err);
  client.on('error', onLost);
  return {
    client,
    async release() {
      try {
        if (lost) throw lost;
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', key);
        client.removeListener('error', onLost);
        client.release();
      } catch (err) {
        client.release(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}

/**
 * Whether a first attempt holds the call now. Asked by taking the lock shared for the statement's
 * own transaction only, so asking holds nothing past it (a first attempt trying for the lock in that
 * instant finds it taken and leaves the call to the workflow's attempt, which asked).
 */
export async function toolCallHeld(pool: Pool, toolCallId: string): Promise<boolean> {
  const { rows } = await pool.query<{ free: boolean }>({
    name: 'tool-call-held',
    text: 'SELECT pg_try_advisory_xact_lock_shared($1, hashtext($2)) AS free',
    values: [FIRST_ATTEMPT_LOCK_CLASS, toolCallId],
  });
  return rows[0]?.free !== true;
}
