import type { WebhookEvent } from '../schemas/events';

/** What a receiver gets as the request body. */
export interface WebhookEnvelope {
  id: string;
  event: WebhookEvent;
  createdAt: string;
  data: object;
}

/** The spec's `wh:{endpointId}:{event}:{idempotency}`; also the delivery workflow's id. */
export function envelopeId(endpointId: string, event: WebhookEvent, idempotencyKey: string): string {
  return `wh:${endpointId}:${event}:${idempotencyKey}`;
}

/**
 * The exact body bytes that are signed and sent. The stored payload is JSONB, which reorders
 * keys, so the top level is rebuilt in the documented order; the result is the same on every
 * attempt because JSONB's own order is deterministic.
 */
export function serializeEnvelope(envelope: WebhookEnvelope): string {
  const { id, event, createdAt, data } = envelope;
  return JSON.stringify({ id, event, createdAt, data });
}
