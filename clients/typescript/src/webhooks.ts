import { createHmac, timingSafeEqual } from 'node:crypto';

/** How old a delivery's timestamp may be: older ones are refused as possible replays. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * True when a webhook delivery is the service's: `x-svc-signature` is `sha256=` + the hex
 * HMAC-SHA256 of `<x-svc-timestamp>.<raw body>` under the endpoint's secret, compared in constant
 * time, and the timestamp is recent. Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined> | Headers,
  rawBody: string | Uint8Array,
  now: Date = new Date(),
): boolean {
  const get = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const signature = get('x-svc-signature');
  const timestamp = get('x-svc-timestamp');
  if (!signature || !timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return false;
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
