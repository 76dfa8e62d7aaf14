import assert from 'node:assert/strict';
import type { TestUser } from '../../testkit/users';

/** Subscribes `url` to `events` for the user, through the management route as a person would. */
export async function createWebhookEndpoint(
  gatewayUrl: string,
  user: TestUser,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${gatewayUrl}/api/webhook-endpoints`, {
    method: 'POST',
    headers: { cookie: user.cookie, origin: gatewayUrl, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as { id: string; secret: string };
}
