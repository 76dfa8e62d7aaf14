import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { WebhooksActivities } from '../activities/webhooks';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from './webhook-delivery.contract';

/**
 * One attempt: a 10 s HTTP deadline plus the database writes around it. The retry policy is the
 * spec's: 4 attempts in all, waiting 1 s, 5 s, then 15 s (1 × 5 = 5, 5 × 5 capped at 15).
 */
const DELIVERY_ATTEMPT_TIMEOUT = '15 seconds';
const DELIVERY_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 5,
  maximumInterval: '15 seconds',
  maximumAttempts: 4,
};
/** Marking the delivery FAILED is one UPDATE: retried until it lands. */
const BOOKKEEPING_TIMEOUT = '30 seconds';
const BOOKKEEPING_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
};

const delivery = proxyActivities<Pick<WebhooksActivities, 'deliverWebhook'>>({
  startToCloseTimeout: DELIVERY_ATTEMPT_TIMEOUT,
  retry: DELIVERY_RETRY,
});
const bookkeeping = proxyActivities<Pick<WebhooksActivities, 'markDeliveryFailed'>>({
  startToCloseTimeout: BOOKKEEPING_TIMEOUT,
  retry: BOOKKEEPING_RETRY,
});

/** Posts one delivery series; after the last failed attempt the delivery becomes FAILED. */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  try {
    return await delivery.deliverWebhook(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await bookkeeping.markDeliveryFailed(input);
    return 'FAILED';
  }
}
