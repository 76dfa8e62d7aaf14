import assert from 'node:assert/strict';
import type { Pool } from 'pg';
import type { AgentEventData, ToolCompletedData } from '../../core/schemas/events';
import {
  deliveriesColumn,
  eventCte,
  toRecorded,
  type DeliveryRow,
  type RecordedDelivery,
} from '../../core/webhooks/store';
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

/**
 * One event for the outbox. The idempotency key is the run id for agent events and the tool call
 * id for tool.completed, so recording the same event twice records nothing new.
 */
export type TestEvent =
  | {
      userId: string;
      event: 'agent.started' | 'agent.completed' | 'agent.failed';
      idempotencyKey: string;
      data: AgentEventData;
    }
  | { userId: string; event: 'tool.completed'; idempotencyKey: string; data: ToolCompletedData };

/**
 * Records one event on its own, with the outbox's own CTE, as the statement that changes a run or
 * a tool call records it beside that change; answers the deliveries it recorded.
 */
export async function recordEvent(pool: Pool, input: TestEvent): Promise<RecordedDelivery[]> {
  const { rows } = await pool.query<{ deliveries: DeliveryRow[] }>({
    text: `WITH src AS (SELECT $1::uuid AS "userId", $2::text AS event, $3::text AS key, $4::jsonb AS data),
           ${eventCte('recorded', { from: 'src', userId: 's."userId"', event: 's.event', key: 's.key', data: 's.data' })}
           SELECT ${deliveriesColumn('recorded')} AS deliveries`,
    values: [input.userId, input.event, input.idempotencyKey, JSON.stringify(input.data)],
  });
  return toRecorded(input.userId, rows[0]?.deliveries ?? []);
}
