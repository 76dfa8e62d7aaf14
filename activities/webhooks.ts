import type { ActivityDeps } from './deps';
import { Context } from '@temporalio/activity';
import { isDatabaseUnavailable } from '../core/db/client';
import { permanentFailure } from '../core/errors/failures';
import { faultPoint } from '../core/process/fault';
import { addLogContext } from '../core/logging/context';
import { webhookAttempts, webhookDeliveries } from '../core/metrics/worker';
import { traceHeaders } from '../core/telemetry/tracing';
import { GuardedHttpError } from '../core/net/guarded-http';
import { serializeEnvelope } from '../core/webhooks/envelope';
import { appSecrets } from '../core/config/config';
import { openSecret } from '../core/webhooks/secret-box';
import { webhookHeaders } from '../core/webhooks/signing';
import {
  insertAttempt,
  markDelivered,
  markDeliveryFailed,
  selectDeliveryToAttempt,
} from '../core/webhooks/store';
import type { DeliverWebhookResult, WebhookDeliveryInput } from '../workflows/webhook-delivery.contract';

/** The spec's per-attempt deadline (DECISIONS: each attempt times out after 10 s). */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How often an attempt tells Temporal it is alive (WEBHOOK_POST's heartbeat timeout is 5 s). */
const HEARTBEAT_EVERY_MS = 1_000;
/** How often a statement is tried again while PostgreSQL cannot be reached. */
const DATABASE_RETRY_MS = 500;
/** How much of a receiver's answer is read; a longer answer fails the attempt as TOO_LARGE. */
const RESPONSE_MAX_BYTES = 1024 * 1024;
/** How much of a receiver's answer the attempt log keeps. */
const RESPONSE_LOG_BYTES = 4 * 1024;

/** What the attempt log keeps of an answer: 4 KB of text, without the NULs PostgreSQL refuses. */
function logExcerpt(body: Buffer): string {
  return body.subarray(0, RESPONSE_LOG_BYTES).toString('utf8').replaceAll('\u0000', '');
}

function describeFailure(err: unknown): string {
  if (err instanceof GuardedHttpError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * What one attempt needs of its activity: its number as Temporal counts them, the signal that
 * abandons it, and a way to wait between tries of a statement.
 */
interface AttemptContext {
  attempt: number;
  signal: AbortSignal;
  sleep(ms: number): Promise<void>;
}

/** A POST that was made and failed, and is in the attempt log: the series goes on. */
class AttemptFailedError extends Error {}

/**
 * A statement of a delivery attempt, tried again while PostgreSQL cannot be reached: our own
 * outage (a restart takes seconds) must not spend one of the receiver's four attempts. The wait is
 * bounded by the attempt's deadline, and ends at once when the attempt is abandoned.
 */
async function untilReachable<T>(ctx: AttemptContext, statement: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await statement();
    } catch (err) {
      if (!isDatabaseUnavailable(err) || ctx.signal.aborted) throw err;
      await ctx.sleep(DATABASE_RETRY_MS);
    }
  }
}

/**
 * One signed POST of one series. Every attempt is recorded, then a 2xx settles the delivery and
 * anything else throws AttemptFailedError. An attempt is numbered after the series' earlier ones:
 * those its workflow counted, and any the log holds that it could not know of (a first attempt, a
 * local activity, whose worker died after its POST and before its workflow task completed: the
 * attempt that runs again in its place is logged as the next).
 */
function attemptOf(deps: ActivityDeps) {
  const { pool } = deps.db;
  return async function attempt(
    { deliveryId, series, attemptsBefore = 0 }: WebhookDeliveryInput,
    ctx: AttemptContext,
  ): Promise<DeliverWebhookResult> {
    const row = await untilReachable(ctx, () => selectDeliveryToAttempt(pool, deliveryId));
    // A settled delivery, or one a redelivery has moved to a newer series, is not posted again.
    if (!row || row.series !== series) return 'SKIPPED';
    if (row.status === 'DELIVERED') return 'DELIVERED';
    if (row.status !== 'PENDING') return 'SKIPPED';
    // After those its workflow counted (Temporal numbers an activity's own) and any in the log.
    const attemptNumber = Math.max(attemptsBefore + ctx.attempt, row.made + 1);
    const data = row.payload.data as { chatId?: unknown; runId?: unknown; toolCallId?: unknown };
    addLogContext({
      userId: row.userId,
      ...(typeof data.chatId === 'string' ? { chatId: data.chatId } : {}),
      ...(typeof data.runId === 'string' ? { runId: data.runId } : {}),
      ...(typeof data.toolCallId === 'string' ? { toolCallId: data.toolCallId } : {}),
    });
    // Checked before every attempt: an endpoint deleted between attempts receives nothing more.
    if (!row.live) {
      throw permanentFailure('WEBHOOK_ENDPOINT_NOT_FOUND', 'The endpoint was deleted; nothing more is sent.');
    }

    const body = serializeEnvelope(row.payload);
    const signing = webhookHeaders({
      secret: openSecret(appSecrets(deps.config), row.secretEncrypted),
      ...(row.previousSecretEncrypted === null
        ? {}
        : { previousSecret: openSecret(appSecrets(deps.config), row.previousSecretEncrypted) }),
      body,
      event: row.event,
      deliveryId,
    });
    // The receiver can join the trace the event belongs to (empty while tracing is off).
    const headers = { ...signing.headers, ...traceHeaders() };
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
        signal: ctx.signal,
      });
      statusCode = res.status;
      responseBody = logExcerpt(res.body);
      if (statusCode < 200 || statusCode > 299) error = `The endpoint answered HTTP ${statusCode}.`;
      webhookAttempts.inc({ outcome: error === null ? 'delivered' : 'http_error' });
    } catch (err) {
      error = describeFailure(err);
      webhookAttempts.inc({ outcome: 'network_error' });
    }
    const durationMs = Math.round(performance.now() - started);
    if (statusCode !== null) await faultPoint(deps.config, 'webhook-answered', { deliveryId, statusCode });

    await untilReachable(ctx, () =>
      insertAttempt(pool, {
        deliveryId,
        series,
        attempt: attemptNumber,
        startedAt,
        durationMs,
        statusCode,
        error,
        responseBody,
        signedContent: signing.signed,
        requestHeaders: headers,
      }),
    );
    deps.logger.info(
      { deliveryId, series, attempt: attemptNumber, statusCode, durationMs, error },
      'webhook attempt',
    );
    if (error !== null) throw new AttemptFailedError(error);

    const delivered = await untilReachable(ctx, () => markDelivered(pool, { deliveryId, series }));
    if (delivered) webhookDeliveries.inc({ outcome: 'delivered' });
    return 'DELIVERED';
  };
}

export function createWebhooksActivities(deps: ActivityDeps) {
  const { pool } = deps.db;
  const attempt = attemptOf(deps);

  return {
    /**
     * One signed POST of one series. Every attempt is recorded, then a 2xx settles the delivery
     * and anything else throws so the workflow's retry policy schedules the next attempt. As an
     * activity it heartbeats throughout, so a worker that dies mid-attempt is noticed in seconds;
     * as a local activity (a series' first attempt) its workflow task's timeout does that.
     */
    async deliverWebhook(input: WebhookDeliveryInput): Promise<DeliverWebhookResult> {
      const ctx = Context.current();
      const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return await attempt(input, {
          attempt: ctx.info.attempt,
          signal: ctx.cancellationSignal,
          sleep: (ms) => ctx.sleep(ms),
        });
      } finally {
        clearInterval(beat);
      }
    },

    /** After the last attempt: PENDING → FAILED, unless a newer series has taken over. */
    async markDeliveryFailed({ deliveryId, series }: WebhookDeliveryInput): Promise<void> {
      if (await markDeliveryFailed(pool, { deliveryId, series }))
        webhookDeliveries.inc({ outcome: 'failed' });
    },
  };
}

export type WebhooksActivities = ReturnType<typeof createWebhooksActivities>;
