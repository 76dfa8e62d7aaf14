import { createHmac } from 'node:crypto';
import type { WebhookEvent } from '../schemas/events';

export const WEBHOOK_USER_AGENT = 'svc-webhooks/1.0';

/** What is signed: `<timestamp>.<raw body>`. */
export function signedContent(timestamp: number, body: string): string {
  return `${timestamp}.${body}`;
}

/** `sha256=` + hex HMAC-SHA256 over `<timestamp>.<raw body>`, keyed with the endpoint's secret. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(signedContent(timestamp, body)).digest('hex')}`;
}

/**
 * The headers of one attempt, and the string they sign (kept in the attempt log so a receiver
 * whose check fails can compare); each attempt calls this again, so each has a fresh timestamp.
 */
export function webhookHeaders(input: {
  secret: string;
  /** The secret a rotation replaced, while its overlap lasts: signs `x-svc-signature-previous`. */
  previousSecret?: string;
  body: string;
  event: WebhookEvent;
  deliveryId: string;
  now?: Date;
}): { headers: Record<string, string>; signed: string } {
  const timestamp = Math.floor((input.now ?? new Date()).getTime() / 1000);
  return {
    signed: signedContent(timestamp, input.body),
    headers: {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      'x-svc-signature': signWebhook(input.secret, timestamp, input.body),
      ...(input.previousSecret === undefined
        ? {}
        : { 'x-svc-signature-previous': signWebhook(input.previousSecret, timestamp, input.body) }),
      'x-svc-timestamp': String(timestamp),
      'x-svc-event': input.event,
      'x-svc-delivery-id': input.deliveryId,
    },
  };
}
