import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { ModelReply, ModelUsage } from '../model/types';

/**
 * A run's model calls, their usage and their cost (migration agent_settings_usage): a call's price
 * is reserved from the balance before it is made and settled once the provider has counted its
 * tokens, with its charge in the ledger tools charge into.
 */

/**
 * Credits run `runId` (an SQL expression) has spent or holds reserved: its charged and reserved
 * model calls, its succeeded and running tool calls. What a budget's `maxCredits` is checked against.
 */
export function runCreditsSql(runId: string): string {
  return `(COALESCE((SELECT sum(CASE WHEN mc.status = 'CHARGED' THEN mc.credits ELSE mc."creditReserved" END)
                       FROM "ModelCall" mc WHERE mc."runId" = ${runId} AND mc.status <> 'RELEASED'), 0)
         + COALESCE((SELECT sum(CASE WHEN t.status = 'SUCCEEDED' THEN COALESCE(t."creditCost", 0) ELSE t."creditReserved" END)
                       FROM "ToolCall" t WHERE t."runId" = ${runId} AND t.status <> 'FAILED'), 0))`;
}

/**
 * Run `runId`'s usage as the snapshot and its terminal event show it: tokens of its charged model
 * calls (summaries included), how many steps the model answered, the credits it was charged (model
 * calls and tools) as a decimal string, and whether a compaction ran.
 */
export function runUsageSql(runId: string): string {
  return `(SELECT jsonb_build_object(
             'inputTokens', COALESCE(sum(mc."inputTokens"), 0)::int,
             'outputTokens', COALESCE(sum(mc."outputTokens"), 0)::int,
             'cachedInputTokens', COALESCE(sum(mc."cachedInputTokens"), 0)::int,
             'steps', (count(*) FILTER (WHERE mc.kind = 'reply'))::int,
             'credits', trim_scale(COALESCE(sum(mc.credits), 0)
                        + COALESCE((SELECT sum(t."creditCost") FROM "ToolCall" t
                                     WHERE t."runId" = ${runId} AND t.status = 'SUCCEEDED'), 0))::text,
             'compacted', COALESCE(bool_or(mc.kind = 'summary'), false))
           FROM "ModelCall" mc WHERE mc."runId" = ${runId} AND mc.status = 'CHARGED')`;
}

/** Run `runId`'s usage per step, oldest first, for the snapshot. */
export function runStepUsageSql(runId: string): string {
  return `COALESCE((SELECT jsonb_agg(jsonb_build_object(
               'step', s.step, 'model', s.model, 'inputTokens', s.input, 'outputTokens', s.output,
               'cachedInputTokens', s.cached, 'credits', trim_scale(s.credits)::text, 'compacted', s.compacted)
             ORDER BY s.step)
             FROM (SELECT mc.step, max(mc.model) FILTER (WHERE mc.kind = 'reply') AS model,
                          sum(mc."inputTokens")::int AS input, sum(mc."outputTokens")::int AS output,
                          sum(mc."cachedInputTokens")::int AS cached, sum(mc.credits) AS credits,
                          bool_or(mc.kind = 'summary') AS compacted
                     FROM "ModelCall" mc WHERE mc."runId" = ${runId} AND mc.status = 'CHARGED'
                    GROUP BY mc.step) s), '[]'::jsonb)`;
}

export type ModelCallKind = 'reply' | 'summary';

/** Whose call it is, of which step, what for, and on which model. */
export interface ModelCallOwner {
  runId: string;
  userId: string;
  step: number;
  kind: ModelCallKind;
  model: string;
}

/**
 * The seq a new call of a run's step takes for its kind (SQL expressions): a step's reply is
 * always 0 (one row however often the step is retried); its summaries come one after another.
 */
function nextSeqSql(runId: string, step: string, kind: string): string {
  return `CASE WHEN ${kind} = 'reply' THEN 0
               ELSE COALESCE((SELECT max(seq) + 1 FROM "ModelCall"
                               WHERE "runId" = ${runId} AND step = ${step} AND kind = ${kind}), 0) END`;
}

export type ReservedModelCall =
  /** The price is taken from the balance: make the call, then charge or release it. */
  | { outcome: 'reserved'; id: string }
  /** The step's reply was charged by an earlier attempt of the step: go on with it. */
  | { outcome: 'charged'; reply: ModelReply }
  | { outcome: 'no-credits' }
  | { outcome: 'over-budget'; spent: string };

/**
 * Reserves a model call's price, `amount` credits, in one statement: taken from the user's balance
 * only when the balance holds it and, with a budget, when the run's credits (runCreditsSql) plus
 * it stay within `maxCredits`; re-checked on the user's row's latest version, like a tool call's.
 * A step's reply is one row (its kind and seq 0): a retry finds it, charged (and goes on with its
 * reply) or released by the retry's gate (and reserved again). A summary takes the next seq.
 */
export async function reserveModelCall(
  pool: Pool,
  input: ModelCallOwner & { amount: string; maxCredits: string | null },
): Promise<ReservedModelCall> {
  const { rows } = await pool.query<{
    outcome: 'reserved' | 'charged' | 'busy' | 'no-credits' | 'over-budget';
    id: string | null;
    reply: ModelReply | null;
    spent: string;
  }>({
    name: 'model-call-reserve',
    text: `WITH prior AS (
             SELECT id, status, reply FROM "ModelCall"
              WHERE "runId" = $1 AND step = $3 AND kind = 'reply' AND $4 = 'reply'
           ), spent AS (
             SELECT ${runCreditsSql('$1')} AS credits
           ), slot AS (
             UPDATE "User" u SET "creditBalance" = u."creditBalance" - $6::numeric
              WHERE u.id = $2 AND u."creditBalance" >= $6::numeric
                AND NOT EXISTS (SELECT 1 FROM prior WHERE status <> 'RELEASED')
                AND ($7::numeric IS NULL OR (SELECT credits FROM spent) + $6::numeric <= $7::numeric)
             RETURNING u.id
           ), reserved AS (
             INSERT INTO "ModelCall" (id, "runId", "userId", step, kind, seq, model, status, "creditReserved")
             SELECT COALESCE((SELECT id FROM prior), $8), $1, $2, $3, $4, ${nextSeqSql('$1', '$3', '$4')},
                    $5, 'RESERVED', $6::numeric
               FROM slot
             ON CONFLICT (id) DO UPDATE SET status = 'RESERVED', "creditReserved" = EXCLUDED."creditReserved",
                    model = EXCLUDED.model, "startedAt" = now(), "finishedAt" = NULL
              WHERE "ModelCall".status = 'RELEASED'
             RETURNING id
           )
           SELECT CASE WHEN EXISTS (SELECT 1 FROM reserved) THEN 'reserved'
                       WHEN EXISTS (SELECT 1 FROM prior WHERE status = 'CHARGED') THEN 'charged'
                       WHEN EXISTS (SELECT 1 FROM prior WHERE status = 'RESERVED') THEN 'busy'
                       WHEN (SELECT "creditBalance" FROM "User" WHERE id = $2) < $6::numeric THEN 'no-credits'
                       ELSE 'over-budget' END AS outcome,
                  (SELECT id FROM reserved) AS id,
                  (SELECT reply FROM prior WHERE status = 'CHARGED') AS reply,
                  trim_scale((SELECT credits FROM spent))::text AS spent`,
    values: [
      input.runId,
      input.userId,
      input.step,
      input.kind,
      input.model,
      input.amount,
      input.maxCredits,
      randomUUID(),
    ],
  });
  const row = rows[0];
  if (row?.outcome === 'reserved' && row.id) return { outcome: 'reserved', id: row.id };
  if (row?.outcome === 'charged' && row.reply) return { outcome: 'charged', reply: row.reply };
  if (row?.outcome === 'no-credits') return { outcome: 'no-credits' };
  // Another attempt of the step holds the reply's reservation: only a handed-off step can meet
  // its predecessor still running; the retry comes after it ended (its gate gives it back).
  if (row?.outcome === 'busy') throw new Error("The step's model call is still reserved by another attempt.");
  return { outcome: 'over-budget', spent: row?.spent ?? '0' };
}

/**
 * Charges a reserved call what its tokens cost at `price` (credits per million; cached input at its
 * own rate), rounded up to the ledger's 4 places, with its ledger row when that is more than 0: one
 * statement, so the charge and its record never part. Under a budget the charge is capped at the
 * reservation, which the budget allowed: a run never spends past its budget, even when the
 * provider counted more than the estimate. The trigger gives the rest of the reservation back.
 * Answers the credits charged; null when the call was no longer reserved (its run ended meanwhile
 * and released it): nothing is charged then.
 */
export async function chargeModelCall(
  pool: Pool,
  input: {
    id: string;
    usage: ModelUsage;
    price: { input: string; output: string; cachedInput: string };
    capAtReservation: boolean;
    reply?: ModelReply;
  },
): Promise<string | null> {
  const { usage, price } = input;
  const { rows } = await pool.query<{ credits: string }>({
    name: 'model-call-charge',
    text: `WITH cost AS (
             SELECT ceil((($2::numeric - $4::numeric) * $5::numeric + $4::numeric * $7::numeric
                          + $3::numeric * $6::numeric) / 100) / 10000 AS credits
           ), done AS (
             UPDATE "ModelCall" m
                SET status = 'CHARGED', "inputTokens" = $2, "outputTokens" = $3, "cachedInputTokens" = $4,
                    credits = CASE WHEN $8 THEN LEAST(cost.credits, m."creditReserved") ELSE cost.credits END,
                    reply = $9::jsonb, "finishedAt" = now()
               FROM cost
              WHERE m.id = $1 AND m.status = 'RESERVED'
             RETURNING m.*
           ), charged AS (
             INSERT INTO "CreditLedgerEntry" (id, "userId", "modelCallId", amount, reason)
             SELECT $10, done."userId", done.id, done.credits, 'model:' || done.kind || ':' || done.model
               FROM done WHERE done.credits > 0
             ON CONFLICT ("modelCallId") DO NOTHING
           )
           SELECT trim_scale(credits)::text AS credits FROM done`,
    values: [
      input.id,
      usage.inputTokens,
      usage.outputTokens,
      Math.min(usage.cachedInputTokens, usage.inputTokens),
      price.input,
      price.output,
      price.cachedInput,
      input.capAtReservation,
      input.reply === undefined ? null : JSON.stringify(input.reply),
      randomUUID(),
    ],
  });
  return rows[0]?.credits ?? null;
}

/**
 * A call of a model that costs nothing (every price 0, as the embedded local model's): there is
 * nothing to reserve or take, so the call is written once made, CHARGED at 0, with no ledger row,
 * in one statement; a step's reply once however often the step is retried.
 */
export async function recordFreeModelCall(
  pool: Pool,
  input: ModelCallOwner & { usage: ModelUsage; reply?: ModelReply },
): Promise<void> {
  const { usage } = input;
  await pool.query({
    name: 'model-call-free',
    text: `INSERT INTO "ModelCall" (id, "runId", "userId", step, kind, seq, model, status, "inputTokens",
                                    "outputTokens", "cachedInputTokens", reply, "finishedAt")
           SELECT $1, $2, $3, $4, $5, ${nextSeqSql('$2', '$4', '$5')}, $6, 'CHARGED', $7, $8, $9, $10::jsonb, now()
           ON CONFLICT ("runId", step, kind, seq) DO NOTHING`,
    values: [
      randomUUID(),
      input.runId,
      input.userId,
      input.step,
      input.kind,
      input.model,
      usage.inputTokens,
      usage.outputTokens,
      Math.min(usage.cachedInputTokens, usage.inputTokens),
      input.reply === undefined ? null : JSON.stringify(input.reply),
    ],
  });
}

/** A reserved call given up (it failed for good): its whole reservation goes back (the trigger). */
export async function releaseModelCall(pool: Pool, id: string): Promise<void> {
  await pool.query({
    name: 'model-call-release',
    text: `UPDATE "ModelCall" SET status = 'RELEASED', "finishedAt" = now() WHERE id = $1 AND status = 'RESERVED'`,
    values: [id],
  });
}
