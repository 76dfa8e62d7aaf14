import { WEBHOOK_EVENTS, webhookEnvelopeSchema, webhookHeadersSchema } from '../../../core/schemas/events';
import {
  createEndpointSchema,
  createdEndpointSchema,
  deliveryListQuerySchema,
  deliveryListSchema,
  deliveryParamsSchema,
  endpointListQuerySchema,
  endpointListSchema,
  endpointParamsSchema,
  redeliveredSchema,
  rotateSecretSchema,
} from '../../../core/schemas/webhooks';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

const TAG = 'Webhooks';

export function registerWebhooksRoutes(routes: RouteTable, ops: Operations): void {
  // What the service sends: the document's `webhooks`, one per event, with the signature headers.
  for (const event of WEBHOOK_EVENTS) {
    routes.registry.registerWebhook({
      method: 'post',
      path: event,
      operationId: `webhook_${event.replace('.', '_')}`,
      summary: `${event}, POSTed to each endpoint subscribed to it, signed with its secret`,
      tags: ['Webhooks'],
      // Authenticated by its signature header, not by a scheme the receiver is asked for.
      security: [],
      request: {
        headers: webhookHeadersSchema,
        body: { content: { 'application/json': { schema: webhookEnvelopeSchema(event) } } },
      },
      responses: {
        200: {
          description: 'Any 2xx: delivered. Anything else, or no answer in 10 s: retried with backoff.',
        },
      },
    });
  }

  routes.add({
    method: 'post',
    path: '/api/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Registers an HTTPS endpoint for events; answers its signing secret, this once',
    tag: TAG,
    auth: 'session',
    request: { body: createEndpointSchema },
    responses: {
      201: {
        description: 'Created',
        schema: createdEndpointSchema,
        links: Object.fromEntries(
          ['rotateWebhookSecret', 'listWebhookDeliveries', 'deleteWebhookEndpoint'].map((operationId) => [
            operationId,
            { operationId, parameters: { endpointId: '$response.body#/id' } },
          ]),
        ),
      },
    },
    errors: ['LIMIT_REACHED'],
    handler: async ({ body }, req) => ({
      status: 201,
      body: await ops.webhooks.createEndpoint(currentAuth(req), body),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/webhook-endpoints/:endpointId/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary:
      'A new signing secret, answered this once; the old one keeps signing (x-svc-signature-previous) for overlapSeconds',
    tag: TAG,
    auth: 'session',
    extension: true,
    request: { params: endpointParamsSchema, body: rotateSecretSchema },
    responses: { 200: { description: 'Rotated', schema: createdEndpointSchema } },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    handler: async ({ params, body }, req) => ({
      status: 200,
      body: await ops.webhooks.rotateEndpointSecret(currentAuth(req), params.endpointId, body),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'Lists the endpoints, newest first; never their secrets',
    tag: TAG,
    auth: 'session',
    request: { query: endpointListQuerySchema },
    responses: { 200: { description: 'A page of endpoints', schema: endpointListSchema } },
    errors: [],
    handler: async ({ query }, req) => ({
      status: 200,
      body: await ops.webhooks.listEndpoints(currentAuth(req), query),
    }),
  });

  routes.add({
    method: 'delete',
    path: '/api/webhook-endpoints/:endpointId',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Removes an endpoint; deliveries still in retry send nothing more',
    tag: TAG,
    auth: 'session',
    request: { params: endpointParamsSchema },
    responses: { 204: { description: 'Removed' } },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    handler: async ({ params }, req) => {
      await ops.webhooks.deleteEndpoint(currentAuth(req), params.endpointId);
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
    request: { params: endpointParamsSchema, query: deliveryListQuerySchema },
    responses: { 200: { description: 'A page of deliveries', schema: deliveryListSchema } },
    errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
    handler: async ({ params, query }, req) => ({
      status: 200,
      body: await ops.webhooks.listDeliveries(currentAuth(req), params.endpointId, query),
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/webhook-deliveries/:deliveryId/redeliver',
    operationId: 'redeliverWebhook',
    summary: 'Sends a settled delivery again as a new series of up to 4 attempts',
    tag: TAG,
    auth: 'session',
    extension: true,
    request: { params: deliveryParamsSchema },
    responses: { 202: { description: 'A new series started', schema: redeliveredSchema } },
    errors: ['DELIVERY_NOT_FOUND', 'DELIVERY_IN_PROGRESS', 'RATE_LIMITED'],
    handler: async ({ params }, req) => ({
      status: 202,
      body: { delivery: await ops.webhooks.redeliver(currentAuth(req), params.deliveryId) },
    }),
  });
}
