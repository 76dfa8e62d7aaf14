/** The workflow type operators see in the Web UI: one execution per delivery series. */
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDeliveryWorkflow';

export interface WebhookDeliveryInput {
  deliveryId: string;
  /** 1 for the first delivery, +1 per redelivery; attempts are numbered within a series. */
  series: number;
}

/** SKIPPED: the delivery was already settled, or a newer series has replaced this one. */
export type DeliverWebhookResult = 'DELIVERED' | 'SKIPPED';
export type WebhookDeliveryOutput = DeliverWebhookResult | 'FAILED';

/**
 * The envelope id is the workflow id, so a second emit of the same event collides with the first
 * and starts nothing; a redelivery series gets its own id.
 */
export function webhookDeliveryWorkflowId(envelopeId: string, series: number): string {
  return series > 1 ? `${envelopeId}:s${series}` : envelopeId;
}
