import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { WorkerDeps } from '../apps/worker/deps';
import { permanentFailure } from '../core/errors/failures';
import { GuardedHttpError } from '../core/net/guarded-http';
import type { EmitWebhookEventInput, WebhookEvent } from '../core/schemas/events';
import { envelopeId, serializeEnvelope, type WebhookEnvelope } from '../core/webhooks/envelope';
import { openSecret } from '../core/webhooks/secret-box';
import { webhookHeaders } from '../core/webhooks/signing';
import { startDeliveryWorkflow } from '../core/webhooks/start-delivery';
import type { DeliverWebhookResult, WebhookDeliveryInput } from '../workflows/webhook-delivery.contract';

/** The spec's per-attempt deadline (DECISIONS: each attempt times out after 10 s). */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is read; a longer answer fails the attempt as TOO_LARGE. */
const RESPONSE_MAX_BYTES = 1024 * 1024;
/** How much of a receiver's answer the attempt log keeps. */
const RESPONSE_LOG_BYTES = 4 * 1024;

export interface EmitWebhookEventResult {
  /** Every delivery of this event, new or already there; empty when no endpoint subscribes. */
  deliveryIds: string[];
}

interface DeliveryRow {
  id: string;
  envelopeId: string;
  series: number;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
}

/** What the attempt log keeps of an answer: 4 KB of text, without the NULs PostgreSQL refuses. */
function logExcerpt(body: Buffer): string {
  return body.subarray(0, RESPONSE_LOG_BYTES).toString('utf8').replaceAll('\u0000', '');
}

function describeFailure(err: unknown): string {
  if (err instanceof GuardedHttpError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export function createWebhooksActivities(deps: WorkerDeps) {
  const { pool } = deps.db;

  return {
    /**
     * Writes one delivery per subscribed endpoint and starts its workflow. The unique
     * (endpoint, event, idempotency key) row and the envelope-id workflow id make a repeated emit
     * a no-op; a PENDING delivery whose workflow is gone is started again. It never waits for a
     * receiver, so a slow or failing endpoint cannot delay or fail the caller.
     */
    async emitWebhookEvent(input: EmitWebhookEventInput): Promise<EmitWebhookEventResult> {
      const { rows: endpoints } = await pool.query<{ id: string }>(
        `SELECT id FROM "WebhookEndpoint"
          WHERE "userId" = $1 AND "isActive" AND "deletedAt" IS NULL AND $2 = ANY(events)`,
        [input.userId, input.event],
      );
      if (endpoints.length === 0) return { deliveryIds: [] };

      // createdAt is fixed by the first emit: a conflicting insert keeps the stored payload.
      const createdAt = new Date().toISOString();
      for (const endpoint of endpoints) {
        const id = envelopeId(endpoint.id, input.event, input.idempotencyKey);
        const envelope: WebhookEnvelope = { id, event: input.event, createdAt, data: input.data };
        await pool.query(
          `INSERT INTO "WebhookDelivery"
                  (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, "updatedAt")
           VALUES ($1, $2, $3, $4, $5, $6, now())
           ON CONFLICT ("endpointId", event, "idempotencyKey") DO NOTHING`,
          [randomUUID(), endpoint.id, input.event, input.idempotencyKey, id, JSON.stringify(envelope)],
        );
      }

      const { rows: deliveries } = await pool.query<DeliveryRow>(
        `SELECT id, "envelopeId", series, status FROM "WebhookDelivery"
          WHERE "endpointId" = ANY($1::uuid[]) AND event = $2 AND "idempotencyKey" = $3`,
        [endpoints.map((e) => e.id), input.event, input.idempotencyKey],
      );
      for (const d of deliveries) {
        if (d.status !== 'PENDING') continue;
        await startDeliveryWorkflow(deps.temporal.client, deps.config.TEMPORAL_TASK_QUEUE, {
          deliveryId: d.id,
          series: d.series,
          envelopeId: d.envelopeId,
        });
      }
      return { deliveryIds: deliveries.map((d) => d.id) };
    },

    /**
     * One signed POST of one series. Every attempt is recorded, then a 2xx settles the delivery
     * and anything else throws so the workflow's retry policy schedules the next attempt.
     */
    async deliverWebhook({ deliveryId, series }: WebhookDeliveryInput): Promise<DeliverWebhookResult> {
      const ctx = Context.current();
      const { rows } = await pool.query<{
        series: number;
        status: DeliveryRow['status'];
        event: WebhookEvent;
        payload: WebhookEnvelope;
        url: string;
        secretEncrypted: string;
        live: boolean;
      }>(
        `SELECT d.series, d.status, d.event, d.payload, e.url, e."secretEncrypted",
                e."isActive" AND e."deletedAt" IS NULL AS live
           FROM "WebhookDelivery" d JOIN "WebhookEndpoint" e ON e.id = d."endpointId"
          WHERE d.id = $1`,
        [deliveryId],
      );
      const row = rows[0];
      // A settled delivery, or one a redelivery has moved to a newer series, is not posted again.
      if (!row || row.series !== series || row.status !== 'PENDING') return 'SKIPPED';
      // Checked before every attempt: an endpoint deleted between attempts receives nothing more.
      if (!row.live) {
        throw permanentFailure(
          'WEBHOOK_ENDPOINT_NOT_FOUND',
          'The endpoint was deleted; nothing more is sent.',
        );
      }

      const body = serializeEnvelope(row.payload);
      const headers = webhookHeaders({
        secret: openSecret(deps.config.APP_SECRET, row.secretEncrypted),
        body,
        event: row.event,
        deliveryId,
      });
      const startedAt = new Date();
      const started = performance.now();
      let statusCode: number | null = null;
      let responseBody: string | null = null;
      let error: string | null = null;
      try {
        const res = await deps.http.request(row.url, {
          method: 'POST',
          headers,
          body,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          maxRedirects: 0,
          maxBytes: RESPONSE_MAX_BYTES,
          signal: ctx.cancellationSignal,
        });
        statusCode = res.status;
        responseBody = logExcerpt(res.body);
        if (statusCode < 200 || statusCode > 299) error = `The endpoint answered HTTP ${statusCode}.`;
      } catch (err) {
        error = describeFailure(err);
      }
      const durationMs = Math.round(performance.now() - started);

      // The attempt number is Temporal's, so a record written twice for one attempt stays one row.
      await pool.query(
        `INSERT INTO "WebhookAttempt"
                (id, "deliveryId", series, attempt, "startedAt", "durationMs", "statusCode", error, "responseBody")
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT ("deliveryId", series, attempt) DO NOTHING`,
        [
          randomUUID(),
          deliveryId,
          series,
          ctx.info.attempt,
          startedAt,
          durationMs,
          statusCode,
          error,
          responseBody,
        ],
      );
      deps.logger.info(
        { deliveryId, series, attempt: ctx.info.attempt, statusCode, durationMs, error },
        'webhook attempt',
      );
      if (error !== null) throw new Error(error);

      await pool.query(
        `UPDATE "WebhookDelivery" SET status = 'DELIVERED', "deliveredAt" = now(), "updatedAt" = now()
          WHERE id = $1 AND series = $2 AND status = 'PENDING'`,
        [deliveryId, series],
      );
      return 'DELIVERED';
    },

    /** After the last attempt: PENDING → FAILED, unless a newer series has taken over. */
    async markDeliveryFailed({ deliveryId, series }: WebhookDeliveryInput): Promise<void> {
      await pool.query(
        `UPDATE "WebhookDelivery" SET status = 'FAILED', "updatedAt" = now()
          WHERE id = $1 AND series = $2 AND status = 'PENDING'`,
        [deliveryId, series],
      );
    },
  };
}

export type WebhooksActivities = ReturnType<typeof createWebhooksActivities>;
