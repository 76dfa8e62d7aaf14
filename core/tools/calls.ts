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
}

/**
 * Writes the call's row once (RUNNING) and answers its state: a retried attempt finds its own.
 * A call of a run opens only while the run is active and no cancel was asked for, under a share
 * lock of the run's row, so it is ordered against the statement that ends the run: a run that has
 * ended (or is ending) starts no tool, and a tool it started is closed with it. Undefined: the run
 * is no longer active and the call was never opened.
 */
export async function openToolCall(pool: Pool, input: RunToolInput): Promise<StoredToolCall | undefined> {
  const { rows } = await pool.query<StoredToolCall>({
    name: 'tool-call-open',
    text: `WITH run AS (
             SELECT id FROM "Run"
              WHERE id = $4 AND status IN ('RUNNING', 'WAITING') AND "cancelRequestedAt" IS NULL
                FOR SHARE
           ), opened AS (
             INSERT INTO "ToolCall" (id, "userId", "chatId", "runId", "toolName", status, input)
             SELECT $1, $2, $3, $4, $5, 'RUNNING', $6::jsonb
              WHERE $4::uuid IS NULL OR EXISTS (SELECT 1 FROM run)
             ON CONFLICT (id) DO NOTHING
             RETURNING status, result, error)
           SELECT status, result, error FROM opened
           UNION ALL
           SELECT status, result, error FROM "ToolCall" WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM opened)`,
    values: [
      input.toolCallId,
      input.userId,
      input.chatId ?? null,
      input.runId ?? null,
      input.toolName,
      JSON.stringify(input.input ?? {}),
    ],
  });
  return rows[0];
}

export async function readToolCall(pool: Pool, toolCallId: string): Promise<StoredToolCall | undefined> {
  const { rows } = await pool.query<StoredToolCall>(
    `SELECT status, result, error FROM "ToolCall" WHERE id = $1`,
    [toolCallId],
  );
  return rows[0];
}

/** RUNNING → FAILED; a call that has already finished is left alone. */
export async function markToolCallFailed(pool: Pool, toolCallId: string, error: string): Promise<void> {
  await pool.query(
    `UPDATE "ToolCall" SET status = 'FAILED', error = $2, "finishedAt" = now() WHERE id = $1 AND status = 'RUNNING'`,
    [toolCallId, error],
  );
}

/**
 * RUNNING → SUCCEEDED with its result, its one charge (keyed by the call) and its tool.completed
 * event, in one statement: a call is charged, and announced, exactly when it succeeded, even if its
 * run is cancelled right after. Null when the call had stopped RUNNING meanwhile (another attempt
 * finished it, or its run ended and closed it): nothing is charged then.
 */
export async function recordToolSuccess(
  pool: Pool,
  input: { toolCallId: string; userId: string; result: ToolResult },
): Promise<RecordedDelivery[] | null> {
  const { result } = input;
  const { rows } = await pool.query<{ deliveries: DeliveryRow[] }>({
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
           SELECT ${deliveriesColumn('announced')} AS deliveries FROM done`,
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
  return row ? toRecorded(input.userId, row.deliveries) : null;
}
