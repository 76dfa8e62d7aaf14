import { newWebhookSecret } from '../core/auth/tokens';
import {
  ConflictError,
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../core/errors/app-error';
import { page } from '../core/schemas/common';
import { toDeliveryDto, toEndpointDto, type DeliveryDto, type EndpointDto } from '../core/schemas/webhooks';
import { appSecrets } from '../core/config/config';
import { sealSecret } from '../core/webhooks/secret-box';
import {
  endpointExists,
  insertEndpoint,
  rotateEndpointSecret,
  selectDeliveries,
  selectDelivery,
  selectDeliveryToResend,
  selectEndpoints,
  softDeleteEndpoint,
  startNewSeries,
} from '../core/webhooks/store';
import { webhookUrlProblems } from '../core/webhooks/url-policy';
import { startDelivery, starterOf } from './temporal';
import type { Page } from './chats';
import type { Caller, OperationDeps } from './deps';
import { consumeOrThrow, limitReached, postgresLimiter } from './limits';

const endpointNotFound = () => new NotFoundError('WEBHOOK_ENDPOINT_NOT_FOUND', 'Webhook endpoint not found.');
const deliveryNotFound = () => new NotFoundError('DELIVERY_NOT_FOUND', 'Webhook delivery not found.');

/** Webhook endpoints and their deliveries. */
export function createWebhooksOperations(deps: OperationDeps) {
  const { pool } = deps.db;
  const redeliveries = postgresLimiter(deps.db, {
    keyPrefix: 'redeliver',
    points: deps.config.WEBHOOK_REDELIVERIES_PER_HOUR,
    durationSeconds: 3600,
  });

  return {
    /** Registers an endpoint; its signing secret is in this answer only (stored sealed). */
    async createEndpoint(
      caller: Caller,
      input: { url: string; events: string[] },
    ): Promise<EndpointDto & { secret: string }> {
      const problems = await webhookUrlProblems(input.url, deps.config, (reason) =>
        deps.logger.info({ reason }, 'webhook endpoint URL refused'),
      );
      if (problems.length) throw new ValidationError(problems);
      const secret = newWebhookSecret();
      const max = deps.config.MAX_WEBHOOK_ENDPOINTS_PER_USER;
      const row = await insertEndpoint(
        pool,
        {
          userId: caller.userId,
          url: input.url,
          events: input.events,
          secretEncrypted: sealSecret(appSecrets(deps.config), secret),
        },
        max,
      );
      if (!row) throw limitReached('MAX_WEBHOOK_ENDPOINTS_PER_USER', max, 'webhook endpoints');
      return { ...toEndpointDto(row), secret };
    },

    async listEndpoints(
      caller: Caller,
      query: { limit: number; cursor?: string },
    ): Promise<Page<EndpointDto>> {
      const rows = await selectEndpoints(pool, caller.userId, query);
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return { data: data.map(toEndpointDto), nextCursor };
    },

    /**
     * A new signing secret, answered this once. For `overlapSeconds` every delivery is signed with
     * both: `x-svc-signature` with the new one, `x-svc-signature-previous` with the old, so the
     * receiver switches at its own pace.
     */
    async rotateEndpointSecret(
      caller: Caller,
      endpointId: string,
      input: { overlapSeconds: number },
    ): Promise<EndpointDto & { secret: string }> {
      const secret = newWebhookSecret();
      const row = await rotateEndpointSecret(pool, {
        userId: caller.userId,
        endpointId,
        secretEncrypted: sealSecret(appSecrets(deps.config), secret),
        overlapSeconds: input.overlapSeconds,
      });
      if (!row) throw endpointNotFound();
      return { ...toEndpointDto(row), secret };
    },

    /** Removes an endpoint; a delivery still in retry sends nothing more to it. */
    async deleteEndpoint(caller: Caller, endpointId: string): Promise<void> {
      if (!(await softDeleteEndpoint(pool, caller.userId, endpointId))) throw endpointNotFound();
    },

    async listDeliveries(
      caller: Caller,
      endpointId: string,
      query: { limit: number; cursor?: string },
    ): Promise<Page<DeliveryDto>> {
      if (!(await endpointExists(pool, caller.userId, endpointId))) throw endpointNotFound();
      const rows = await selectDeliveries(pool, caller.userId, endpointId, query);
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return { data: data.map(toDeliveryDto), nextCursor };
    },

    /**
     * Sends a settled delivery again as a new series of attempts. A PENDING delivery is only
     * started again when its workflow is gone (Temporal was away); one still being attempted
     * answers 409 DELIVERY_IN_PROGRESS. Should Temporal be unreachable now, the delivery stays
     * PENDING and the request can simply be repeated (or the reconciler starts it).
     */
    async redeliver(caller: Caller, deliveryId: string): Promise<DeliveryDto> {
      await consumeOrThrow(redeliveries, caller.userId, 'Too many redeliveries; retry later.');
      const found = await selectDeliveryToResend(pool, caller.userId, deliveryId);
      if (!found) throw deliveryNotFound();
      let series = found.series;
      if (found.status !== 'PENDING') {
        const next = await startNewSeries(pool, deliveryId, found.series);
        if (next === null) throw new ConflictError('DELIVERY_IN_PROGRESS', 'The delivery is being sent.');
        series = next;
      }
      const started = await startDelivery(starterOf(deps), { ...found, series }).catch((err: unknown) => {
        deps.logger.warn({ deliveryId, err: (err as Error).message }, 'redelivery could not start');
        throw new ServiceUnavailableError('Redelivery could not be started; try again shortly.');
      });
      if (!started && found.status === 'PENDING') {
        throw new ConflictError('DELIVERY_IN_PROGRESS', 'The delivery is being sent.');
      }
      const delivery = await selectDelivery(pool, caller.userId, deliveryId);
      if (!delivery) throw deliveryNotFound();
      return toDeliveryDto(delivery);
    },
  };
}

export type WebhooksOperations = ReturnType<typeof createWebhooksOperations>;
