import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-delivery.contract';

/**
 * Starts the delivery workflow of one series; false when it is already running or has already
 * finished. A finished execution is only replaced when it failed or was terminated, so a late
 * duplicate start can never post a settled delivery again.
 */
export async function startDeliveryWorkflow(
  client: Client,
  taskQueue: string,
  delivery: WebhookDeliveryInput & { envelopeId: string },
): Promise<boolean> {
  try {
    await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: webhookDeliveryWorkflowId(delivery.envelopeId, delivery.series),
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      workflowIdConflictPolicy: 'FAIL',
      args: [{ deliveryId: delivery.deliveryId, series: delivery.series } satisfies WebhookDeliveryInput],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}
