import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { exampleCreatedEndpoint, exampleDelivery, exampleEndpoint, exampleNewEndpoint } from './examples';
import { cursorQuery, isoOrNull, limitQuery, listSchema, stored } from './common';
import { WEBHOOK_EVENTS } from './events';

extendZodWithOpenApi(z);

const URL_MAX_LENGTH = 2048;

export const endpointSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    isActive: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .openapi('WebhookEndpoint', { example: exampleEndpoint });

export const createdEndpointSchema = endpointSchema
  .extend({
    secret: z
      .string()
      .openapi({ description: 'The signing secret, `svcwhsec_…`; shown only in this answer.' }),
  })
  .openapi('CreatedWebhookEndpoint', { example: exampleCreatedEndpoint });

export const attemptSchema = z
  .object({
    series: z.number().int(),
    attempt: z.number().int(),
    startedAt: z.iso.datetime(),
    durationMs: z.number().int(),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    responseBody: z.string().nullable().openapi({ description: 'The first 4 KB of the answer.' }),
    signedContent: z.string().nullable().openapi({
      description:
        'The exact string this attempt signed, `<x-svc-timestamp>.<raw body>`: HMAC-SHA256 of it with your secret must equal x-svc-signature. Null for attempts recorded before the log kept it.',
    }),
    requestHeaders: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({ description: 'The request headers this attempt sent (its signature, never the secret).' }),
  })
  .openapi('WebhookAttempt', { example: exampleDelivery.attempts[0] });

export const deliverySchema = z
  .object({
    id: z.uuid(),
    event: z.enum(WEBHOOK_EVENTS),
    envelopeId: z.string(),
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED']),
    createdAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
    attempts: z.array(attemptSchema).openapi({
      description:
        'The latest attempts (at most 20), oldest first; `attemptCount` tells how many there were in all.',
    }),
    attemptCount: z.number().int().min(0),
  })
  .openapi('WebhookDelivery', { example: exampleDelivery });

export const createEndpointSchema = z
  .object({
    url: stored(
      z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' }).max(URL_MAX_LENGTH),
    ),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1)
      .transform((events) => [...new Set(events)]),
  })
  .openapi('NewWebhookEndpoint', { example: exampleNewEndpoint });

export const endpointParamsSchema = z.object({ endpointId: z.uuid() });
/** A rotated secret's overlap: at most a day, so a leaked secret cannot be kept alive long. */
export const MAX_SECRET_OVERLAP_SECONDS = 24 * 3600;
export const rotateSecretSchema = z
  .object({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_SECRET_OVERLAP_SECONDS)
      .default(MAX_SECRET_OVERLAP_SECONDS)
      .openapi({
        description:
          'How long the old secret keeps signing, in `x-svc-signature-previous`, beside the new one (0 to 86400; default 86400).',
      }),
  })
  .strict()
  .openapi('SecretRotation', { example: { overlapSeconds: 3600 } });
export const deliveryParamsSchema = z.object({ deliveryId: z.uuid() });
export const endpointListQuerySchema = z.object({ limit: limitQuery(100, 50), cursor: cursorQuery });
export const deliveryListQuerySchema = z.object({ limit: limitQuery(50, 20), cursor: cursorQuery });

export type EndpointDto = z.output<typeof endpointSchema>;
export type DeliveryDto = z.output<typeof deliverySchema>;

export interface EndpointRow {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: Date;
}

export interface DeliveryRow {
  id: string;
  event: string;
  envelopeId: string;
  status: string;
  createdAt: Date;
  deliveredAt: Date | null;
  attemptCount: number;
  attempts: {
    series: number;
    attempt: number;
    startedAt: string;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseBody: string | null;
    signedContent: string | null;
    requestHeaders: Record<string, string> | null;
  }[];
}

export function toEndpointDto(row: EndpointRow): EndpointDto {
  return { ...row, events: row.events as EndpointDto['events'], createdAt: row.createdAt.toISOString() };
}

export function toDeliveryDto(row: DeliveryRow): DeliveryDto {
  return {
    ...row,
    event: row.event as DeliveryDto['event'],
    status: row.status as DeliveryDto['status'],
    createdAt: row.createdAt.toISOString(),
    deliveredAt: isoOrNull(row.deliveredAt),
  };
}

export const endpointListSchema = listSchema(endpointSchema, 'WebhookEndpointList', exampleEndpoint);
export const deliveryListSchema = listSchema(deliverySchema, 'WebhookDeliveryList', exampleDelivery);
export const redeliveredSchema = z.object({ delivery: deliverySchema }).openapi('Redelivery', {
  example: { delivery: { ...exampleDelivery, status: 'PENDING', deliveredAt: null } },
});
