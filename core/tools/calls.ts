import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ToolResult } from '../schemas/events';
import {
  deliveriesColumn,
  eventCte,
  toRecorded,
  type DeliveryRow,
  type RecordedDelivery,
} from '../webhooks/store';
import type { RunToolInput } from './types';

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
  | { outcome: 'at-cap' };

const PG_UNIQUE_VIOLATION = '23505';

/**
 * Writes the call's row once (RUNNING) and answers its state: a retried attempt finds its own.
 * The row, its price taken from the user's balance (`creditReserved`) and a slot of the user's
 * active calls are one statement: the user's row is re-checked on its latest version, so racing
 * calls cannot overdraw the balance or pass the cap, and the call's end settles both (trigger
 * tool_call_ended_settle: a success keeps its cost, a failure is refunded whole).
 * A call of a run opens only while the run is active and no cancel was asked for, under a share
 * lock of the run's row, so it is ordered against the statement that ends the run: a run that has
 * ended (or is ending) starts no tool, and a tool it started is closed with it.
 */
export async function openToolCall(
  pool: Pool,
  input: RunToolInput & { price: string; maxActive: number },
): Promise<OpenedToolCall> {
  const query = {
    name: 'tool-call-open',
    text: `WITH run AS (
             SELECT id FROM "Run"
              WHERE id = $4 AND status IN ('RUNNING', 'WAITING') AND "cancelRequestedAt" IS NULL
                FOR SHARE
           ), prior AS (
             SELECT status, result, error, "errorCode" FROM "ToolCall" WHERE id = $1
           ), slot AS (
             UPDATE "User" u SET "activeToolCalls" = u."activeToolCalls" + 1,
                    "creditBalance" = u."creditBalance" - $7::numeric
              WHERE u.id = $2 AND NOT EXISTS (SELECT 1 FROM prior)
                AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM run))
                AND u."activeToolCalls" < $8 AND u."creditBalance" >= $7::numeric
             RETURNING u.id
           ), opened AS (
             INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input, "creditReserved", via)
             SELECT $1, $2, $3, $4, $5, 'RUNNING', $6::jsonb, $7::numeric,
                    COALESCE($9, (SELECT r.via FROM "Run" r WHERE r.id = $4), 'rest') FROM slot
             RETURNING status, result, error, "errorCode")
           SELECT 'opened' AS outcome, status, result, error, "errorCode" FROM opened
           UNION ALL
           SELECT 'existing', status, result, error, "errorCode" FROM prior
           UNION ALL
           SELECT CASE WHEN $4::uuid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM run) THEN 'run-ended'
                       WHEN u."creditBalance" < $7::numeric THEN 'no-credits'
                       ELSE 'at-cap' END, NULL, NULL, NULL, NULL
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
  type Row = StoredToolCall & { outcome: OpenedToolCall['outcome'] };
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
  const { outcome, ...call } = row;
  if (outcome === 'opened' || outcome === 'existing') return { outcome, call };
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
  pool: Pool,
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
 * Ends a direct call its route gave up waiting for (its window passed, or the wait broke), in one
 * statement, before the route answers: a RUNNING row becomes FAILED with `error` (a refund, by
 * the trigger), and a call no attempt has opened yet is written FAILED, so that none opens it
 * later. The success statement records only on a RUNNING row, so once this has run the call can no
 * longer be charged or announced. A call that SUCCEEDED first is left as it is. Answers the call
 * as its row now holds it.
 */
export async function abandonToolCall(
  pool: Pool,
  call: RunToolInput & { error: string; errorCode: string | null },
): Promise<StoredToolCall | undefined> {
  const { rows } = await pool.query<StoredToolCall>({
    name: 'tool-call-abandon',
    text: `WITH ended AS (
             INSERT INTO "ToolCall" (id, "userId", "toolName", status, input, via, error, "errorCode", "finishedAt")
             VALUES ($1, $2, $3, 'FAILED', $4::jsonb, COALESCE($5, 'rest'), $6, $7, now())
             ON CONFLICT (id) DO UPDATE
                SET status = 'FAILED', error = EXCLUDED.error, "errorCode" = EXCLUDED."errorCode", "finishedAt" = now()
              WHERE "ToolCall".status = 'RUNNING'
             RETURNING status, result, error, "errorCode")
           SELECT status, result, error, "errorCode" FROM ended
           UNION ALL
           SELECT status, result, error, "errorCode" FROM "ToolCall"
            WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM ended)`,
    values: [
      call.toolCallId,
      call.userId,
      call.toolName,
      JSON.stringify(call.input ?? {}),
      call.via ?? null,
      call.error,
      call.errorCode,
    ],
  });
  // Settled by another transaction in the instant this statement began: read as it is now.
  return rows[0] ?? readToolCall(pool, call.toolCallId);
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
  pool: Pool,
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
