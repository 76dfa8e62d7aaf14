import { ActivityFailure, CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { WebhooksActivities } from '../activities/webhooks';
import { BOOKKEEPING, WEBHOOK_POST } from './activity-options';
import type { WebhookDeliveryInput, WebhookDeliveryOutput } from './webhook-delivery.contract';

const delivery = proxyActivities<Pick<WebhooksActivities, 'deliverWebhook'>>(WEBHOOK_POST);
const bookkeeping = proxyActivities<Pick<WebhooksActivities, 'markDeliveryFailed'>>(BOOKKEEPING);

/** Posts one delivery series; after the last failed attempt the delivery becomes FAILED. */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  try {
    return await delivery.deliverWebhook(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // Once the attempts are spent the delivery must say so, even if this workflow is being cancelled.
    await CancellationScope.nonCancellable(() => bookkeeping.markDeliveryFailed(input));
    return 'FAILED';
  }
}
