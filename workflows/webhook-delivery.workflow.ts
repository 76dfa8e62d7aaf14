import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  TemporalFailure,
} from '@temporalio/workflow';
import type { WebhooksActivities } from '../activities/webhooks';
import {
  BOOKKEEPING,
  WEBHOOK_FIRST_POST,
  WEBHOOK_RETRY,
  WEBHOOK_SECOND_ATTEMPT_AFTER,
} from './activity-options';
import {
  DELIVERY_FAILED_TYPE,
  type WebhookDeliveryInput,
  type WebhookDeliveryOutput,
} from './webhook-delivery.contract';

const firstAttempt = proxyLocalActivities<Pick<WebhooksActivities, 'deliverWebhook'>>(WEBHOOK_FIRST_POST);
const laterAttempts = proxyActivities<Pick<WebhooksActivities, 'deliverWebhook'>>(WEBHOOK_RETRY);
const bookkeeping = proxyActivities<Pick<WebhooksActivities, 'markDeliveryFailed'>>(BOOKKEEPING);

/**
 * Posts one delivery series; after the last failed attempt the delivery becomes FAILED, and so
 * does the execution (type WEBHOOK_DELIVERY_FAILED, the last attempt's error as its message), so
 * the Web UI lists the deliveries that gave up as Failed.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  try {
    return await attempts(input);
  } catch (err) {
    // An attempt's failure: an activity's comes wrapped in an ActivityFailure, a local activity's
    // as it was thrown. A cancel between the attempts stops the series as a cancel of an attempt does.
    if (!(err instanceof TemporalFailure)) throw err;
    // Once the attempts are spent the delivery must say so, even if this workflow is being cancelled.
    await CancellationScope.nonCancellable(() => bookkeeping.markDeliveryFailed(input));
    throw ApplicationFailure.create({
      type: DELIVERY_FAILED_TYPE,
      message: (err instanceof ActivityFailure ? err.cause?.message : err.message) || 'Every attempt failed.',
      nonRetryable: true,
    });
  }
}

/**
 * The series: the first attempt in this workflow task, the others (the spec's 1 s, 5 s and 15 s
 * later) as one activity with its retries. A refusal no attempt can change (a deleted endpoint)
 * and a cancel end the series at once.
 */
async function attempts(input: WebhookDeliveryInput): Promise<WebhookDeliveryOutput> {
  try {
    return await firstAttempt.deliverWebhook(input);
  } catch (err) {
    if (isCancellation(err) || isPermanent(err)) throw err;
  }
  await sleep(WEBHOOK_SECOND_ATTEMPT_AFTER);
  return laterAttempts.deliverWebhook({ ...input, attemptsBefore: 1 });
}

/** A failure no later attempt can change (thrown non-retryable), or one that is not an attempt's. */
function isPermanent(err: unknown): boolean {
  if (!(err instanceof TemporalFailure)) return true;
  for (let cause: unknown = err; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApplicationFailure && cause.nonRetryable === true) return true;
  }
  return false;
}
