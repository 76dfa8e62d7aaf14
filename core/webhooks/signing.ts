import { createHmac } from 'node:crypto';
import type { WebhookEvent } from '../schemas/events';

export const WEBHOOK_USER_AGENT = 'svc-webhooks/1.0';

/** `sha256=` + hex HMAC-SHA256 over `<timestamp>.<raw body>`, keyed with the endpoint's secret. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The headers of one attempt; each attempt calls this again, so each carries a fresh timestamp. */
export function webhookHeaders(input: {
  secret: string;
  body: string;
  event: WebhookEvent;
  deliveryId: string;
  now?: Date;
}): Record<string, string> {
  const timestamp = Math.floor((input.now ?? new Date()).getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-svc-signature': signWebhook(input.secret, timestamp, input.body),
    'x-svc-timestamp': String(timestamp),
    'x-svc-event': input.event,
    'x-svc-delivery-id': input.deliveryId,
  };
}
