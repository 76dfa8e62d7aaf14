import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { insertUnderCap } from '../db/caps';
import { CUTOFF } from '../db/retention';
import { decodeCursor } from '../schemas/common';
import type { DeliveryRow as DeliveryViewRow, EndpointRow } from '../schemas/webhooks';
import type { WebhookEvent } from '../schemas/events';
import type { WebhookEnvelope } from './envelope';

/** A delivery row written with an event, to be started once its statement has committed. */
export interface RecordedDelivery {
  deliveryId: string;
  envelopeId: string;
  series: number;
  endpointId: string;
  event: WebhookEvent;
  userId: string;
  chatId?: string;
  runId?: string;
}

/** What `eventCte` returns per delivery row, aggregated by the statement as `jsonb_agg`. */
export type DeliveryRow = Omit<RecordedDelivery, 'chatId' | 'runId' | 'userId'> & {
  chatId: string | null;
  runId: string | null;
};

/**
 * The SQL of a data-modifying CTE, `<name> AS (INSERT …)`, that records an event as one delivery
 * row per subscribed endpoint for each row of `from` (aliased `s`). It goes into the very statement
 * that makes the state change the event announces, so the event exists if and only if the change
 * does (a transactional outbox), at no extra round trip; a user with no endpoints writes nothing.
 * The unique (endpoint, event, idempotency key) makes a repeat a no-op, and the envelope id
 * `wh:{endpointId}:{event}:{idempotency}` is built here, once, for the row and the workflow id.
 * Each field is an SQL expression over `s`.
 */
export function eventCte(
  name: string,
  spec: { from: string; userId: string; event: string; key: string; data: string },
): string {
  return `${name} AS (
    INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, "updatedAt")
    SELECT gen_random_uuid(), e.id, ev.event, ev.key, env.id,
           jsonb_build_object('id', env.id, 'event', ev.event,
             'createdAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', ev.data),
           now()
      FROM ${spec.from} s
     CROSS JOIN LATERAL (SELECT (${spec.event})::text AS event, (${spec.key})::text AS key,
                                (${spec.data})::jsonb AS data, (${spec.userId})::uuid AS "userId") ev
      JOIN "WebhookEndpoint" e ON e."userId" = ev."userId" AND e."isActive" AND e."deletedAt" IS NULL
                              AND ev.event = ANY(e.events)
     CROSS JOIN LATERAL (SELECT 'wh:' || e.id || ':' || ev.event || ':' || ev.key AS id) env
    ON CONFLICT ("endpointId", event, "idempotencyKey") DO NOTHING
    RETURNING id AS "deliveryId", "envelopeId", series, "endpointId", event,
              payload #>> '{data,chatId}' AS "chatId", payload #>> '{data,runId}' AS "runId")`;
}

/** `jsonb_agg` of an eventCte's rows, as a column of the statement's result. */
export const deliveriesColumn = (cte: string) =>
  `COALESCE((SELECT jsonb_agg(${cte}) FROM ${cte}), '[]'::jsonb)`;

/** The rows of an eventCte, for `startDeliveries`; every event of one statement is one user's. */
export function toRecorded(userId: string, rows: readonly DeliveryRow[]): RecordedDelivery[] {
  return rows.map(({ chatId, runId, ...d }) => ({
    ...d,
    userId,
    ...(chatId ? { chatId } : {}),
    ...(runId ? { runId } : {}),
  }));
}

/** A PENDING delivery this long without an attempt of its series had no workflow take it. */
const UNSTARTED_AFTER_SECONDS = 15;

/** Deliveries whose workflow never started (Temporal was away when their event was recorded). */
export async function listUnstartedDeliveries(pool: Pool, limit = 100): Promise<RecordedDelivery[]> {
  const { rows } = await pool.query<DeliveryRow & { userId: string }>(
    `SELECT d.id AS "deliveryId", d."envelopeId", d.series, d."endpointId", d.event, e."userId",
            d.payload #>> '{data,chatId}' AS "chatId", d.payload #>> '{data,runId}' AS "runId"
       FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
      WHERE d.status = 'PENDING' AND d."updatedAt" < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM "WebhookAttempt" a WHERE a."deliveryId" = d.id AND a.series = d.series)
      ORDER BY d."updatedAt" LIMIT $2`,
    [UNSTARTED_AFTER_SECONDS, limit],
  );
  return rows.flatMap(({ userId, ...row }) => toRecorded(userId, [row]));
}

/** A delivery as its next attempt needs it: its series and state, its envelope, its endpoint. */
export interface DeliveryToAttempt {
  series: number;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  event: WebhookEvent;
  payload: WebhookEnvelope;
  url: string;
  secretEncrypted: string;
  /** The secret a rotation replaced, while it still signs beside the new one. */
  previousSecretEncrypted: string | null;
  /** The endpoint is active and not deleted. */
  live: boolean;
  userId: string;
  /** Attempts of the delivery's current series already in the log. */
  made: number;
}

export async function selectDeliveryToAttempt(
  pool: Pool,
  deliveryId: string,
): Promise<DeliveryToAttempt | undefined> {
  const { rows } = await pool.query<DeliveryToAttempt>({
    name: 'delivery-to-attempt',
    text: `SELECT d.series, d.status, d.event, d.payload, e.url, e."secretEncrypted", e."userId",
                  CASE WHEN e."previousSecretExpiresAt" > now() THEN e."previousSecretEncrypted" END
                    AS "previousSecretEncrypted",
                  e."isActive" AND e."deletedAt" IS NULL AS live,
                  (SELECT count(*)::int FROM "WebhookAttempt" a WHERE a."deliveryId" = d.id AND a.series = d.series)
                    AS made
             FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
            WHERE d.id = $1`,
    values: [deliveryId],
  });
  return rows[0];
}

/** One attempt in the log; the same attempt of a series written twice stays one row. */
export async function insertAttempt(
  pool: Pool,
  attempt: {
    deliveryId: string;
    series: number;
    attempt: number;
    startedAt: Date;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseBody: string | null;
    signedContent: string;
    requestHeaders: Record<string, string>;
  },
): Promise<void> {
  await pool.query({
    name: 'delivery-attempt',
    text: `INSERT INTO "WebhookAttempt"
                  (id, "deliveryId", series, attempt, "startedAt", "durationMs", "statusCode", error, "responseBody",
                   "signedContent", "requestHeaders")
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT ("deliveryId", series, attempt) DO NOTHING`,
    values: [
      randomUUID(),
      attempt.deliveryId,
      attempt.series,
      attempt.attempt,
      attempt.startedAt,
      attempt.durationMs,
      attempt.statusCode,
      attempt.error,
      attempt.responseBody,
      attempt.signedContent,
      JSON.stringify(attempt.requestHeaders),
    ],
  });
}

/** After a 2xx: PENDING → DELIVERED, for the series that made the attempt; false when it no longer was. */
export async function markDelivered(
  pool: Pool,
  delivery: { deliveryId: string; series: number },
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'delivery-delivered',
    text: `UPDATE "WebhookDelivery" SET status = 'DELIVERED', "deliveredAt" = now(), "updatedAt" = now()
            WHERE id = $1 AND series = $2 AND status = 'PENDING'`,
    values: [delivery.deliveryId, delivery.series],
  });
  return rowCount === 1;
}

/** After the last attempt: PENDING → FAILED, unless a newer series has taken over. */
export async function markDeliveryFailed(
  pool: Pool,
  delivery: { deliveryId: string; series: number },
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'delivery-failed',
    text: `UPDATE "WebhookDelivery" SET status = 'FAILED', "updatedAt" = now()
            WHERE id = $1 AND series = $2 AND status = 'PENDING'`,
    values: [delivery.deliveryId, delivery.series],
  });
  return rowCount === 1;
}

// Endpoints and the attempt log, as the management routes see them. Hand-written: the delivery list
// aggregates each delivery's attempts in the same statement, which Prisma cannot.

/** Undefined when the user already holds `max` endpoints (nothing is written then). */
export function insertEndpoint(
  pool: Pool,
  input: { userId: string; url: string; events: string[]; secretEncrypted: string },
  max: number,
): Promise<EndpointRow | undefined> {
  return insertUnderCap(
    pool,
    {
      userId: input.userId,
      countSql: 'SELECT count(*) FROM "WebhookEndpoint" WHERE "userId" = $1 AND "deletedAt" IS NULL',
      max,
    },
    async (client) => {
      const { rows } = await client.query<EndpointRow>(
        `INSERT INTO "WebhookEndpoint" (id, "userId", url, events, "secretEncrypted")
         VALUES ($1, $2, $3, $4, $5)
         RETURNING id, url, events, "isActive", "createdAt"`,
        [randomUUID(), input.userId, input.url, input.events, input.secretEncrypted],
      );
      return rows[0] as EndpointRow;
    },
  );
}

/** One page (plus one row telling whether another follows), newest first. */
export async function selectEndpoints(
  pool: Pool,
  userId: string,
  query: { limit: number; cursor?: string },
): Promise<EndpointRow[]> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows } = await pool.query<EndpointRow>(
    `SELECT id, url, events, "isActive", "createdAt" FROM "WebhookEndpoint"
      WHERE "userId" = $1 AND "deletedAt" IS NULL
        AND ($2::timestamptz IS NULL OR ("createdAt", id) < ($2, $3::uuid))
      ORDER BY "createdAt" DESC, id DESC
      LIMIT $4`,
    [userId, after?.at ?? null, after?.id ?? null, query.limit + 1],
  );
  return rows;
}

export async function endpointExists(pool: Pool, userId: string, endpointId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `SELECT 1 FROM "WebhookEndpoint" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
    [endpointId, userId],
  );
  return rowCount === 1;
}

/** False when there was no such live endpoint of this user. */
export async function softDeleteEndpoint(pool: Pool, userId: string, endpointId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE "WebhookEndpoint" SET "deletedAt" = now(), "isActive" = false
      WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
    [endpointId, userId],
  );
  return rowCount === 1;
}

/** Deliveries with their attempt log, oldest attempt first; only the caller's live endpoints. */
/** A delivery answer holds its latest attempts only: redeliveries add series without end. */
export const MAX_EMBEDDED_ATTEMPTS = 20;

const DELIVERY_SELECT = `
  SELECT d.id, d.event, d."envelopeId", d.status::text AS status, d."createdAt", d."deliveredAt",
         COALESCE((SELECT json_agg(json_build_object(
                    'series', a.series, 'attempt', a.attempt,
                    'startedAt', to_char(a."startedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                    'durationMs', a."durationMs", 'statusCode', a."statusCode",
                    'error', a.error, 'responseBody', a."responseBody",
                    'signedContent', a."signedContent", 'requestHeaders', a."requestHeaders")
                    ORDER BY a.series, a.attempt)
                     FROM (SELECT * FROM "WebhookAttempt" WHERE "deliveryId" = d.id
                            ORDER BY series DESC, attempt DESC LIMIT ${MAX_EMBEDDED_ATTEMPTS}) a), '[]') AS attempts,
         (SELECT count(*)::int FROM "WebhookAttempt" WHERE "deliveryId" = d.id) AS "attemptCount"
    FROM "WebhookDelivery" d
    JOIN "WebhookEndpoint" e ON e.id = d."endpointId" AND e."userId" = $1 AND e."deletedAt" IS NULL`;

export async function selectDelivery(
  pool: Pool,
  userId: string,
  deliveryId: string,
): Promise<DeliveryViewRow | undefined> {
  const { rows } = await pool.query<DeliveryViewRow>(`${DELIVERY_SELECT} WHERE d.id = $2`, [
    userId,
    deliveryId,
  ]);
  return rows[0];
}

/** One page (plus one row telling whether another follows) of an endpoint's deliveries, newest first. */
export async function selectDeliveries(
  pool: Pool,
  userId: string,
  endpointId: string,
  query: { limit: number; cursor?: string },
): Promise<DeliveryViewRow[]> {
  const after = query.cursor ? decodeCursor(query.cursor) : undefined;
  const { rows } = await pool.query<DeliveryViewRow>(
    `${DELIVERY_SELECT}
      WHERE d."endpointId" = $2
        AND ($3::timestamptz IS NULL OR (d."createdAt", d.id) < ($3, $4::uuid))
      ORDER BY d."createdAt" DESC, d.id DESC
      LIMIT $5`,
    [userId, endpointId, after?.at ?? null, after?.id ?? null, query.limit + 1],
  );
  return rows;
}

/** A delivery of the caller's, with what its redelivery needs. */
export async function selectDeliveryToResend(
  pool: Pool,
  userId: string,
  deliveryId: string,
): Promise<(RecordedDelivery & { status: string }) | undefined> {
  const { rows } = await pool.query<DeliveryRow & { status: string }>(
    `SELECT d.id AS "deliveryId", d."envelopeId", d.series, d.status::text AS status, d."endpointId", d.event,
            d.payload #>> '{data,chatId}' AS "chatId", d.payload #>> '{data,runId}' AS "runId"
       FROM "WebhookDelivery" d
       JOIN "WebhookEndpoint" e ON e.id = d."endpointId" AND e."userId" = $2 AND e."deletedAt" IS NULL
      WHERE d.id = $1`,
    [deliveryId, userId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const [recorded] = toRecorded(userId, [row]);
  return recorded && { ...recorded, status: row.status };
}

/**
 * Moves a settled delivery to a new series, PENDING again, before its workflow starts, so the
 * workflow's first attempt always sees its own series. Null: the delivery is PENDING (or another
 * redelivery moved it first).
 */
export async function startNewSeries(pool: Pool, deliveryId: string, series: number): Promise<number | null> {
  const { rows } = await pool.query<{ series: number }>(
    `UPDATE "WebhookDelivery"
        SET series = series + 1, status = 'PENDING', "deliveredAt" = NULL, "updatedAt" = now()
      WHERE id = $1 AND series = $2 AND status <> 'PENDING'
      RETURNING series`,
    [deliveryId, series],
  );
  return rows[0]?.series ?? null;
}

export type SealedSecretColumn = 'secretEncrypted' | 'previousSecretEncrypted';

/**
 * Every sealed secret (the current ones, and those a rotation replaced), deleted endpoints
 * included: a redelivery may still need them.
 */
export async function selectSealedSecrets(
  pool: Pool,
): Promise<{ id: string; column: SealedSecretColumn; sealed: string }[]> {
  const { rows } = await pool.query<{ id: string; column: SealedSecretColumn; sealed: string }>(
    `SELECT id, 'secretEncrypted' AS column, "secretEncrypted" AS sealed FROM "WebhookEndpoint"
     UNION ALL
     SELECT id, 'previousSecretEncrypted', "previousSecretEncrypted" FROM "WebhookEndpoint"
      WHERE "previousSecretEncrypted" IS NOT NULL`,
  );
  return rows;
}

/** Replaces a sealed secret only if it is still the one read, so a concurrent change is kept. */
export async function replaceSealedSecret(
  pool: Pool,
  target: { id: string; column: SealedSecretColumn; sealed: string },
  to: string,
): Promise<boolean> {
  const column = target.column === 'secretEncrypted' ? '"secretEncrypted"' : '"previousSecretEncrypted"';
  const { rowCount } = await pool.query(
    `UPDATE "WebhookEndpoint" SET ${column} = $3 WHERE id = $1 AND ${column} = $2`,
    [target.id, target.sealed, to],
  );
  return rowCount === 1;
}

/**
 * Gives the endpoint a new sealed secret; the one it replaces keeps signing beside it for
 * `overlapSeconds` (0: at once no more). Null when there is no such live endpoint of the user.
 */
export async function rotateEndpointSecret(
  pool: Pool,
  input: { userId: string; endpointId: string; secretEncrypted: string; overlapSeconds: number },
): Promise<EndpointRow | null> {
  const { rows } = await pool.query<EndpointRow>(
    `UPDATE "WebhookEndpoint"
        SET "previousSecretEncrypted" = "secretEncrypted",
            "previousSecretExpiresAt" = now() + make_interval(secs => $4),
            "secretEncrypted" = $3
      WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL
      RETURNING id, url, events, "isActive", "createdAt"`,
    [input.endpointId, input.userId, input.secretEncrypted, input.overlapSeconds],
  );
  return rows[0] ?? null;
}

/**
 * Deletes a batch of settled deliveries (DELIVERED or FAILED) recorded longer than `retentionMs`
 * ago, oldest first, with their attempts (by the foreign key). A PENDING one is still being
 * delivered, or redelivered, and stays. Answers the deliveries deleted.
 */
export async function deleteOldDeliveries(pool: Pool, retentionMs: number, batch: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM "WebhookDelivery"
      WHERE id = ANY(ARRAY(SELECT id FROM "WebhookDelivery" WHERE "createdAt" < ${CUTOFF} AND status <> 'PENDING'
                            ORDER BY "createdAt" LIMIT $2))
        AND status <> 'PENDING'`,
    [retentionMs, batch],
  );
  return rowCount ?? 0;
}

/**
 * Clears what a batch of attempts made longer than `retentionMs` ago sent (the signed string and
 * the request headers, kept for a receiver's signature check), oldest first; the attempt's outcome
 * stays with its delivery. Answers the attempts cleared.
 */
export async function clearOldAttemptContent(
  pool: Pool,
  retentionMs: number,
  batch: number,
): Promise<number> {
  const { rowCount } = await pool.query(
    `UPDATE "WebhookAttempt" SET "signedContent" = NULL, "requestHeaders" = NULL
      WHERE id = ANY(ARRAY(SELECT id FROM "WebhookAttempt"
                            WHERE ("signedContent" IS NOT NULL OR "requestHeaders" IS NOT NULL) AND "startedAt" < ${CUTOFF}
                            ORDER BY "startedAt" LIMIT $2))`,
    [retentionMs, batch],
  );
  return rowCount ?? 0;
}
