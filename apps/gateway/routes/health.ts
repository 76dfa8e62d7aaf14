import { z } from 'zod';
import { temporalReachable } from '../../../core/temporal/connection';
import type { GatewayDeps } from '../deps';
import type { RouteTable } from '../http/route-table';

const READINESS_TIMEOUT_MS = 2_000;

const readinessSchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    database: z.enum(['up', 'down']),
    temporal: z.enum(['up', 'down']),
  })
  .openapi('Readiness');

async function databaseReachable(deps: GatewayDeps): Promise<boolean> {
  const client = await deps.db.pool.connect().catch(() => undefined);
  if (!client) return false;
  try {
    await client.query({ text: 'SELECT 1', query_timeout: READINESS_TIMEOUT_MS } as never);
    return true;
  } catch {
    return false;
  } finally {
    client.release();
  }
}

export function registerHealthRoutes(routes: RouteTable, deps: GatewayDeps): void {
  routes.add({
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'Answers while the process is alive',
    tag: 'Health',
    auth: 'none',
    extension: true,
    request: {},
    responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
    errors: [],
    handler: async () => ({ status: 200, body: { status: 'ok' } }),
  });

  routes.add({
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    summary: 'Answers 200 when PostgreSQL and Temporal are reachable, else 503 naming what is down',
    tag: 'Health',
    auth: 'none',
    extension: true,
    request: {},
    responses: {
      200: { description: 'Ready', schema: readinessSchema },
      503: { description: 'A dependency is down', schema: readinessSchema },
    },
    errors: [],
    handler: async () => {
      const [database, temporal] = await Promise.all([
        databaseReachable(deps),
        temporalReachable(deps.temporal.connection, READINESS_TIMEOUT_MS),
      ]);
      const ready = database && temporal;
      return {
        status: ready ? 200 : 503,
        body: {
          status: ready ? 'ready' : 'unavailable',
          database: database ? 'up' : 'down',
          temporal: temporal ? 'up' : 'down',
        },
      };
    },
  });
}
