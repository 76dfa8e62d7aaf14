import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { newWebhookSecret } from '../../../core/auth/tokens';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../../../core/errors/app-error';
import {
  cursorQuery,
  decodeCursor,
  isoOrNull,
  limitQuery,
  listSchema,
  page,
} from '../../../core/schemas/common';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../../core/schemas/events';
import { sealSecret } from '../../../core/webhooks/secret-box';
import { startDelivery, starterOf } from '../../../workflows/client';
import { webhookUrlProblems } from '../../../core/webhooks/url-policy';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

const TAG = 'Webhooks';
const URL_MAX_LENGTH = 2048;

const endpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    isActive: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .openapi('WebhookEndpoint');

const createdEndpointSchema = endpointSchema
  .extend({
    secret: z
      .string()
      .openapi({ description: 'The signing secret, `svcwhsec_…`; shown only in this answer.' }),
  })
  .openapi('CreatedWebhookEndpoint');

const attemptSchema = z
  .object({
    series: z.number().int(),
    attempt: z.number().int(),
    startedAt: z.iso.datetime(),
    durationMs: z.number().int(),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    responseBody: z.string().nullable().openapi({ description: 'The first 4 KB of the answer.' }),
  })
  .openapi('WebhookAttempt');

const deliverySchema = z
  .object({
    id: z.uuid(),
    event: z.enum(WEBHOOK_EVENTS),
    envelopeId: z.string(),
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED']),
    createdAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
    attempts: z.array(attemptSchema),
  })
  .openapi('WebhookDelivery');

const createBody = z.object({
  url: z.url({ protocol: /^https?$/ }).max(URL_MAX_LENGTH),
  events: z
    .array(z.enum(WEBHOOK_EVENTS))
    .min(1)
    .transform((events) => [...new Set(events)]),
});

interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: Date;
}

function endpointView(row: EndpointRow) {
  return { ...row, createdAt: row.createdAt.toISOString() };
}

interface DeliveryRow {
  id: string;
  event: string;
  envelopeId: string;
  status: string;
  createdAt: Date;
  deliveredAt: Date | null;
  attempts: {
    series: number;
    attempt: number;
    startedAt: string;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseBody: string | null;
  }[];
}

/** Deliveries with their attempt log, oldest attempt first; only the caller's live endpoints. */
const DELIVERY_SELECT = `
  SELECT d.id, d.event, d."envelopeId", d.status::text AS status, d."createdAt", d."deliveredAt",
         COALESCE((SELECT json_agg(json_build_object(
                    'series', a.series, 'attempt', a.attempt,
                    'startedAt', to_char(a."startedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                    'durationMs', a."durationMs", 'statusCode', a."statusCode",
                    'error', a.error, 'responseBody', a."responseBody")
                    ORDER BY a.series, a.attempt)
                     FROM "WebhookAttempt" a WHERE a."deliveryId" = d.id), '[]') AS attempts
    FROM "WebhookDelivery" d
    JOIN "WebhookEndpoint" e ON e.id = d."endpointId" AND e."userId" = $1 AND e."deletedAt" IS NULL`;

function deliveryView(row: DeliveryRow) {
  return {
    ...row,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: isoOrNull(row.deliveredAt),
  };
}

export function registerWebhooksRoutes(routes: RouteTable, deps: GatewayDeps): void {
  const { pool } = deps.db;

  async function findDelivery(userId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
    const { rows } = await pool.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.id = $2`, [
      userId,
      deliveryId,
    ]);
    return rows[0];
  }

  routes.add({
    method: 'post',
    path: '/api/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Registers an HTTPS endpoint for events; answers its signing secret, this once',
    tag: TAG,
    auth: 'session',
    request: { body: createBody },
    responses: { 201: { description: 'Created', schema: createdEndpointSchema } },
    errors: ['INVALID_REQUEST'],
    handler: async ({ body }, req) => {
      const { userId } = currentAuth(req);
      const problems = await webhookUrlProblems(body.url, deps.config);
      if (problems.length) throw new ValidationError(problems);
      const secret = newWebhookSecret();
      const { rows } = await pool.query<EndpointRow>(
        `INSERT INTO "WebhookEndpoint" (id, "userId", url, events, "secretEncrypted")
         VALUES ($1, $2, $3, $4, $5)
         RETURNING id, url, events, "isActive", "createdAt"`,
        [randomUUID(), userId, body.url, body.events, sealSecret(deps.config.APP_SECRET, secret)],
      );
      return { status: 201, body: { ...endpointView(rows[0]!), secret } };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'Lists the endpoints, newest first; never their secrets',
    tag: TAG,
    auth: 'session',
    request: { query: z.object({ limit: limitQuery(100, 50), cursor: cursorQuery }) },
    responses: {
      200: { description: 'A page of endpoints', schema: listSchema(endpointSchema, 'WebhookEndpointList') },
    },
    errors: [],
    handler: async ({ query }, req) => {
      const { userId } = currentAuth(req);
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
      const { rows } = await pool.query<EndpointRow>(
        `SELECT id, url, events, "isActive", "createdAt" FROM "WebhookEndpoint"
          WHERE "userId" = $1 AND "deletedAt" IS NULL
            AND ($2::timestamptz IS NULL OR ("createdAt", id) < ($2, $3::uuid))
          ORDER BY "createdAt" DESC, id DESC
          LIMIT $4`,
        [userId, after?.at ?? null, after?.id ?? null, query.limit + 1],
      );
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return { status: 200, body: { data: data.map(endpointView), nextCursor } };
    },
  });

  const endpointParams = z.object({ endpointId: z.uuid() });
  routes.add({
    method: 'delete',
    path: '/api/webhook-endpoints/:endpointId',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Removes an endpoint; deliveries still in retry send nothing more',
    tag: TAG,
    auth: 'session',
    request: { params: endpointParams },
    responses: { 204: { description: 'Removed' } },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    handler: async ({ params }, req) => {
      const { userId } = currentAuth(req);
      const { rowCount } = await pool.query(
        `UPDATE "WebhookEndpoint" SET "deletedAt" = now(), "isActive" = false
          WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
        [params.endpointId, userId],
      );
      if (!rowCount) throw new NotFoundError('WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found.');
      return { status: 204 };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/webhook-endpoints/:endpointId/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "An endpoint's deliveries, newest first, each with its attempt log",
    tag: TAG,
    auth: 'session',
    extension: true,
    request: { params: endpointParams, query: z.object({ limit: limitQuery(50, 20), cursor: cursorQuery }) },
    responses: {
      200: { description: 'A page of deliveries', schema: listSchema(deliverySchema, 'WebhookDeliveryList') },
    },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    handler: async ({ params, query }, req) => {
      const { userId } = currentAuth(req);
      const { rowCount } = await pool.query(
        `SELECT 1 FROM "WebhookEndpoint" WHERE id = $1 AND "userId" = $2 AND "deletedAt" IS NULL`,
        [params.endpointId, userId],
      );
      if (!rowCount) throw new NotFoundError('WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found.');
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
      const { rows } = await pool.query<DeliveryRow>(
        `${DELIVERY_SELECT}
          WHERE d."endpointId" = $2
            AND ($3::timestamptz IS NULL OR (d."createdAt", d.id) < ($3, $4::uuid))
          ORDER BY d."createdAt" DESC, d.id DESC
          LIMIT $5`,
        [userId, params.endpointId, after?.at ?? null, after?.id ?? null, query.limit + 1],
      );
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return { status: 200, body: { data: data.map(deliveryView), nextCursor } };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/webhook-deliveries/:deliveryId/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Sends a settled delivery again as a new series of up to 4 attempts',
    tag: TAG,
    auth: 'session',
    extension: true,
    request: { params: z.object({ deliveryId: z.uuid() }) },
    responses: {
      202: { description: 'A new series started', schema: z.object({ delivery: deliverySchema }) },
    },
    errors: ['DELIVERY_NOT_FOUND', 'DELIVERY_IN_PROGRESS', 'SERVICE_UNAVAILABLE'],
    handler: async ({ params }, req) => {
      const { userId } = currentAuth(req);
      const { rows } = await pool.query<{
        envelopeId: string;
        series: number;
        status: string;
        endpointId: string;
        event: WebhookEvent;
        chatId: string | null;
        runId: string | null;
      }>(
        `SELECT d."envelopeId", d.series, d.status::text AS status, d."endpointId", d.event,
                d.payload #>> '{data,chatId}' AS "chatId", d.payload #>> '{data,runId}' AS "runId"
           FROM "WebhookDelivery" d
           JOIN "WebhookEndpoint" e ON e.id = d."endpointId" AND e."userId" = $2 AND e."deletedAt" IS NULL
          WHERE d.id = $1`,
        [params.deliveryId, userId],
      );
      const found = rows[0];
      if (!found) throw new NotFoundError('DELIVERY_NOT_FOUND', 'Webhook delivery not found.');

      // The series moves on before its workflow starts, so the workflow's first attempt always
      // sees its own series. A PENDING delivery is only started again when its workflow is gone.
      let series = found.series;
      if (found.status !== 'PENDING') {
        const bumped = await pool.query<{ series: number }>(
          `UPDATE "WebhookDelivery"
              SET series = series + 1, status = 'PENDING', "deliveredAt" = NULL, "updatedAt" = now()
            WHERE id = $1 AND series = $2 AND status <> 'PENDING'
            RETURNING series`,
          [params.deliveryId, found.series],
        );
        if (!bumped.rows[0]) throw new ConflictError('DELIVERY_IN_PROGRESS', 'The delivery is being sent.');
        series = bumped.rows[0].series;
      }
      // Should Temporal be unreachable, the delivery stays PENDING without a workflow, and the
      // next redeliver call starts it: the request can simply be repeated.
      const started = await startDelivery(starterOf(deps), {
        deliveryId: params.deliveryId,
        series,
        envelopeId: found.envelopeId,
        endpointId: found.endpointId,
        event: found.event,
        userId,
        ...(found.chatId ? { chatId: found.chatId } : {}),
        ...(found.runId ? { runId: found.runId } : {}),
      }).catch((err: unknown) => {
        req.log.warn({ err }, 'redelivery could not start');
        throw new ServiceUnavailableError('Redelivery could not be started; try again shortly.');
      });
      if (!started && found.status === 'PENDING') {
        throw new ConflictError('DELIVERY_IN_PROGRESS', 'The delivery is being sent.');
      }
      const delivery = await findDelivery(userId, params.deliveryId);
      if (!delivery) throw new NotFoundError('DELIVERY_NOT_FOUND', 'Webhook delivery not found.');
      return { status: 202, body: { delivery: deliveryView(delivery) } };
    },
  });
}
