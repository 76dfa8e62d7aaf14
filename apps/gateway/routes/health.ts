import { z } from 'zod';
import type { Operations } from '../../../operations';
import type { RouteTable } from '../http/route-table';

const readinessSchema = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    database: z.enum(['up', 'down']),
    temporal: z.enum(['up', 'down']),
  })
  .openapi('Readiness', { example: { status: 'ready', database: 'up', temporal: 'up' } });

export function registerHealthRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    summary: 'Answers while the process is alive',
    tag: 'Health',
    auth: 'none',
    extension: true,
    request: {},
    responses: {
      200: {
        description: 'Alive',
        schema: z.object({ status: z.literal('ok') }).openapi({ example: { status: 'ok' } }),
      },
    },
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
      503: {
        description: 'A dependency is down',
        schema: readinessSchema,
        example: { status: 'unavailable', database: 'up', temporal: 'down' },
      },
    },
    errors: [],
    handler: async () => {
      const readiness = await ops.health.readiness();
      return { status: readiness.status === 'ready' ? 200 : 503, body: readiness };
    },
  });
}
