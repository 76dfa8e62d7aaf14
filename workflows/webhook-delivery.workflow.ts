import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  proxyActivities,
} from '@temporalio/workflow';
import type { WebhooksActivities } from '../activities/webhooks';
import { BOOKKEEPING, WEBHOOK_POST } from './activity-options';
import {
  DELIVERY_FAILED_TYPE,
  type WebhookDeliveryInput,
  type WebhookDeliveryOutput,
} from './webhook-delivery.contract';
import { v3OrLater } from './versions';

const delivery = proxyActivities<Pick<WebhooksActivities, 'deliverWebhook'>>(WEBHOOK_POST);
const bookkeeping = proxyActivities<Pick<WebhooksActivities, 'markDeliveryFailed'>>(BOOKKEEPING);

/**
 * Posts one delivery series; after the last failed attempt the delivery becomes FAILED, and so
 * does the execution (type WEBHOOK_DELIVERY_FAILED, the last attempt's error as its message), so
 * the Web UI lists the deliveries that gave up as Failed.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  try {
    return await delivery.deliverWebhook(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // Once the attempts are spent the delivery must say so, even if this workflow is being cancelled.
    await CancellationScope.nonCancellable(() => bookkeeping.markDeliveryFailed(input));
    // Executions from before the change completed with 'FAILED', and still do when replayed.
    if (!v3OrLater()) return 'FAILED';
    throw ApplicationFailure.create({
      type: DELIVERY_FAILED_TYPE,
      message: err.cause?.message ?? 'Every attempt failed.',
      nonRetryable: true,
    });
  }
}
