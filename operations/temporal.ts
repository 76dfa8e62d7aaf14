import {
  type Client,
  type WorkflowHandleWithFirstExecutionRunId,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Logger } from '../core/logging/logger';
import type { Transport } from '../core/schemas/common';
import { metadataKeywords, type RunMetadata } from '../core/schemas/metadata';
import type { RecordedDelivery } from '../core/webhooks/store';
import {
  AGENT_WORKFLOW_TYPE,
  agentRunMemo,
  agentWorkflowId,
  type AgentRunInput,
} from '../workflows/agent.contract';
import type { agentRunWorkflow } from '../workflows/agent.workflow';
import {
  agentRunSearchAttributes,
  chatIdSearchAttribute,
  runIdSearchAttribute,
  runViaSearchAttribute,
  toolNameSearchAttribute,
  userIdSearchAttribute,
  webhookEndpointIdSearchAttribute,
  webhookEventSearchAttribute,
} from '../workflows/search-attributes';
import {
  TOOL_CALL_WORKFLOW_TYPE,
  toolCallWorkflowId,
  type ToolCallInput,
} from '../workflows/tool-call.contract';
import type { toolCallWorkflow } from '../workflows/tool-call.workflow';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
} from '../workflows/webhook-delivery.contract';
import type { webhookDeliveryWorkflow } from '../workflows/webhook-delivery.workflow';

/**
 * How the service starts and finds its workflows (Temporal client code: the operations call it,
 * and the worker hands the activities their delivery starts from it): ids, task queue, search
 * attributes and start options, in one place. Starts are typed by the workflow function (a
 * type-only import: the gateway never loads workflow code), so a changed input fails to compile
 * here.
 */
export interface Starter {
  client: Client;
  taskQueue: string;
  /**
   * The client is a worker's, over its own connection (a worker's activities start deliveries):
   * a delivery it starts asks for an eager start, and its first workflow task comes back to this
   * worker in the start's answer instead of through the task queue.
   */
  eagerStart?: boolean;
}

/** The starter of a process whose deps hold its Temporal client, its config and its logger. */
export function starterOf(deps: {
  temporal: { client: Client };
  config: { TEMPORAL_TASK_QUEUE: string };
  logger: Logger;
}): Starter & { logger: Logger } {
  return { client: deps.temporal.client, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, logger: deps.logger };
}

/**
 * A worker's starter, over the client on the worker's own connection: the deliveries its
 * activities start ask for an eager start (activities/deps.ts, startDeliveries).
 */
export function workerStarter(
  client: Client,
  config: { TEMPORAL_TASK_QUEUE: string },
  logger: Logger,
): Starter & { logger: Logger } {
  return { client, taskQueue: config.TEMPORAL_TASK_QUEUE, logger, eagerStart: true };
}

/**
 * Starts the chat's workflow for one run; a chat has one running execution at a time. `via` and
 * `metadata` go in its records only (search attributes, memo, summary), not in its input.
 */
export function startAgentRun(
  starter: Starter,
  input: AgentRunInput,
  via: Transport,
  metadata: RunMetadata = {},
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentRunWorkflow>> {
  return starter.client.workflow.start<typeof agentRunWorkflow>(AGENT_WORKFLOW_TYPE, {
    workflowId: agentWorkflowId(input.chatId),
    taskQueue: starter.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    memo: agentRunMemo(input.runId, metadata),
    typedSearchAttributes: agentRunSearchAttributes(input, via, metadataKeywords(metadata)),
    staticSummary: `Agent run ${input.runId}${input.planMode ? ' (plan mode)' : ''} via ${via.toUpperCase()}`,
  });
}

/** The run id of the chat's running execution when it carries `runId`, else null. */
export async function runningExecutionOf(
  client: Client,
  chatId: string,
  runId: string,
): Promise<string | null> {
  try {
    const description = await client.workflow.getHandle(agentWorkflowId(chatId)).describe();
    if (description.status.name !== 'RUNNING') return null;
    const memo = (await description.memo) as { runId?: string } | undefined;
    return memo?.runId === runId ? description.runId : null;
  } catch {
    return null;
  }
}

/**
 * Starts one blocking tool call's workflow; a retried start (the same tool call id) joins the
 * execution still running, and one after it ended starts again, finding the call's row settled.
 */
export function startToolCall(
  starter: Starter,
  input: ToolCallInput,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof toolCallWorkflow>> {
  return starter.client.workflow.start<typeof toolCallWorkflow>(TOOL_CALL_WORKFLOW_TYPE, {
    workflowId: toolCallWorkflowId(input.toolCallId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    taskQueue: starter.taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: toolNameSearchAttribute, value: input.toolName },
      { key: userIdSearchAttribute, value: input.userId },
      ...(input.via ? [{ key: runViaSearchAttribute, value: input.via }] : []),
    ],
    staticSummary: `${input.toolName} (${input.toolCallId})${input.via ? ` via ${input.via.toUpperCase()}` : ''}`,
  });
}

/**
 * Starts the delivery workflow of one series: `eager` when its first workflow task (which makes the
 * first attempt) came back with the start's answer, to run on this worker at once (a worker's
 * starter asks for that), `queued` when it waits in the task queue, false when the series is
 * already running or has already finished. A finished execution is only replaced when it failed or
 * was terminated, so a late duplicate start can never post a settled delivery again. The search
 * attributes let an operator ask for every delivery of a user, a chat, a run, an event or an
 * endpoint.
 */
export async function startDelivery(
  starter: Starter,
  delivery: RecordedDelivery,
): Promise<'eager' | 'queued' | false> {
  const attributes: SearchAttributePair[] = [
    { key: userIdSearchAttribute, value: delivery.userId },
    { key: webhookEventSearchAttribute, value: delivery.event },
    { key: webhookEndpointIdSearchAttribute, value: delivery.endpointId },
  ];
  if (delivery.chatId) attributes.push({ key: chatIdSearchAttribute, value: delivery.chatId });
  if (delivery.runId) attributes.push({ key: runIdSearchAttribute, value: delivery.runId });
  const input: WebhookDeliveryInput = { deliveryId: delivery.deliveryId, series: delivery.series };
  try {
    const handle = await starter.client.workflow.start<typeof webhookDeliveryWorkflow>(
      WEBHOOK_DELIVERY_WORKFLOW_TYPE,
      {
        workflowId: webhookDeliveryWorkflowId(delivery.envelopeId, delivery.series),
        taskQueue: starter.taskQueue,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        workflowIdConflictPolicy: 'FAIL',
        args: [input],
        typedSearchAttributes: attributes,
        staticSummary: `${delivery.event} to endpoint ${delivery.endpointId}`,
        requestEagerStart: starter.eagerStart ?? false,
      },
    );
    return handle.eagerlyStarted ? 'eager' : 'queued';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * Starts the deliveries a committed statement recorded. One that fails to start is logged and left
 * to the reconciler, which starts every PENDING delivery that has made no attempt: the event is
 * already durable, so the caller goes on.
 */
export async function startDeliveries(
  starter: Starter & { logger: Logger },
  deliveries: readonly RecordedDelivery[],
): Promise<void> {
  await Promise.all(
    deliveries.map((d) =>
      startDelivery(starter, d).catch((err: unknown) =>
        starter.logger.warn(
          { deliveryId: d.deliveryId, err: (err as Error).message },
          'delivery not started yet; the reconciler will start it',
        ),
      ),
    ),
  );
}
