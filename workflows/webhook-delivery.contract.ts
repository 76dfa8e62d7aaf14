/** The workflow type operators see in the Web UI: one execution per delivery series. */
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** 1 for the first delivery, +1 per redelivery; attempts are numbered within a series. */
  series: number;
  /**
   * Attempts of the series made before this activity's (the first is a local activity of its own):
   * its attempts are numbered after them. None when absent.
   */
  attemptsBefore?: number;
}

/**
 * DELIVERED: this attempt or an earlier one of the series delivered it. SKIPPED: it gave up
 * already, or a newer series has replaced this one.
 */
export type DeliverWebhookResult = 'DELIVERED' | 'SKIPPED';
/** A series that gave up fails with DELIVERY_FAILED_TYPE. */
export type WebhookDeliveryOutput = DeliverWebhookResult;

/** The failure type of a delivery series that gave up: `ExecutionStatus = 'Failed'` finds them. */
export const DELIVERY_FAILED_TYPE = 'WEBHOOK_DELIVERY_FAILED';

/**
 * The envelope id is the workflow id, so a second emit of the same event collides with the first
 * and starts nothing; a redelivery series gets its own id.
 */
export function webhookDeliveryWorkflowId(envelopeId: string, series: number): string {
  return series > 1 ? `${envelopeId}:s${series}` : envelopeId;
}
