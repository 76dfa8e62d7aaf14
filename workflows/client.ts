import {
  type Client,
  type WorkflowHandleWithFirstExecutionRunId,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Logger } from '../core/logging/logger';
import type { RecordedDelivery } from '../core/webhooks/store';
import { AGENT_WORKFLOW_TYPE, agentWorkflowId, type AgentRunInput } from './agent.contract';
import type { agentRunWorkflow } from './agent.workflow';
import {
  chatIdSearchAttribute,
  runIdSearchAttribute,
  runStatusSearchAttribute,
  runViaSearchAttribute,
  toolNameSearchAttribute,
  userIdSearchAttribute,
  webhookEndpointIdSearchAttribute,
  webhookEventSearchAttribute,
} from './search-attributes';
import {
  firstAttemptEndedSignal,
  TOOL_CALL_WORKFLOW_TYPE,
  toolCallWorkflowId,
  type ToolCallInput,
} from './tool-call.contract';
import type { toolCallWorkflow } from './tool-call.workflow';
import { FIRST_ATTEMPT_HEAD_START_MS, WEBHOOK_TAKEOVER_DELAY_MS } from './activity-options';
import {
  firstAttemptFailedSignal,
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
} from './webhook-delivery.contract';
import type { webhookDeliveryWorkflow } from './webhook-delivery.workflow';

/**
 * How the service starts its workflows: ids, task queue, search attributes and start options, in
 * one place. Starts are typed by the workflow function (a type-only import: the gateway never
 * loads workflow code), so a changed input fails to compile here.
 */
export interface Starter {
  client: Client;
  taskQueue: string;
  /** Set on a worker: it posts the first attempt of the deliveries it starts itself. */
  firstAttempts?: FirstAttempts;
}

/**
 * Posts a delivery's first attempt in the process that recorded its event, right after its
 * workflow's start and outside it, so an event reaches its receiver without waiting for a second
 * execution's first workflow task (about 20 ms; bench, e2e row). Its workflow, started with
 * `firstAttemptByStarter`, takes over when that attempt fails or never reports.
 */
export interface FirstAttempts {
  /** Starts the attempt and returns at once; its outcome reaches the delivery's workflow. */
  post(delivery: RecordedDelivery): void;
  /**
   * Resolves once every attempt posted so far has ended: a stopping worker waits for this, since
   * the SDK does not know of these attempts, before it closes what they use.
   */
  settled(): Promise<void>;
}

/** The starter of a process whose deps hold its Temporal client, its config and its logger. */
export function starterOf(deps: {
  temporal: { client: Client };
  config: { TEMPORAL_TASK_QUEUE: string };
  logger: Logger;
  firstAttempts?: FirstAttempts;
}): Starter & { logger: Logger } {
  return {
    client: deps.temporal.client,
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    logger: deps.logger,
    ...(deps.firstAttempts ? { firstAttempts: deps.firstAttempts } : {}),
  };
}

/** The route that admitted a run. */
export type RunVia = 'rest' | 'mcp' | 'console';

/**
 * Starts the chat's workflow for one run; a chat has one running execution at a time. `via` goes
 * in its records only (search attribute, summary), not in its input.
 */
export function startAgentRun(
  starter: Starter,
  input: AgentRunInput,
  via: RunVia,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentRunWorkflow>> {
  return starter.client.workflow.start<typeof agentRunWorkflow>(AGENT_WORKFLOW_TYPE, {
    workflowId: agentWorkflowId(input.chatId),
    taskQueue: starter.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    // How a retried start (the dispatcher's) recognises an execution that carries this run.
    memo: { runId: input.runId },
    typedSearchAttributes: [
      { key: chatIdSearchAttribute, value: input.chatId },
      { key: runIdSearchAttribute, value: input.runId },
      { key: userIdSearchAttribute, value: input.userId },
      { key: runStatusSearchAttribute, value: 'QUEUED' },
      { key: runViaSearchAttribute, value: via },
    ],
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
 * An offered call's execution starts FIRST_ATTEMPT_HEAD_START_MS later, so its first task does not
 * compete with the first attempt for the worker's CPU; whoever does not settle the call wakes it.
 */
export function startToolCall(
  starter: Starter,
  input: ToolCallInput,
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof toolCallWorkflow>> {
  return starter.client.workflow.start<typeof toolCallWorkflow>(
    TOOL_CALL_WORKFLOW_TYPE,
    toolCallStartOptions(starter, input),
  );
}

/**
 * Wakes an offered call's execution before its head start is out: no first attempt will settle the
 * call (none took it, or the one that did let go of it, or failed it for good, whose error the
 * workflow answers). A plain signal would wait the delay out; a signal-with-start cuts it short. An
 * execution that has already closed is left closed (the call was settled, or given up).
 */
export async function wakeToolCall(starter: Starter, input: ToolCallInput): Promise<void> {
  try {
    await starter.client.workflow.signalWithStart<typeof toolCallWorkflow, []>(TOOL_CALL_WORKFLOW_TYPE, {
      ...toolCallStartOptions(starter, input),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      signal: firstAttemptEndedSignal,
      signalArgs: [],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

function toolCallStartOptions(starter: Starter, input: ToolCallInput) {
  return {
    workflowId: toolCallWorkflowId(input.toolCallId),
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
    taskQueue: starter.taskQueue,
    args: [input] as [ToolCallInput],
    typedSearchAttributes: [
      { key: toolNameSearchAttribute, value: input.toolName },
      { key: userIdSearchAttribute, value: input.userId },
      ...(input.via ? [{ key: runViaSearchAttribute, value: input.via }] : []),
    ],
    staticSummary: `${input.toolName} (${input.toolCallId})${input.via ? ` via ${input.via.toUpperCase()}` : ''}`,
    ...(input.offered ? { startDelay: FIRST_ATTEMPT_HEAD_START_MS } : {}),
  };
}

/**
 * How a delivery series' workflow is started: its id, and search attributes that let an operator
 * ask for every delivery of a user, a chat, a run, an event or an endpoint.
 */
function deliveryStartOptions(starter: Starter, delivery: RecordedDelivery, input: WebhookDeliveryInput) {
  const attributes: SearchAttributePair[] = [
    { key: userIdSearchAttribute, value: delivery.userId },
    { key: webhookEventSearchAttribute, value: delivery.event },
    { key: webhookEndpointIdSearchAttribute, value: delivery.endpointId },
  ];
  if (delivery.chatId) attributes.push({ key: chatIdSearchAttribute, value: delivery.chatId });
  if (delivery.runId) attributes.push({ key: runIdSearchAttribute, value: delivery.runId });
  return {
    workflowId: webhookDeliveryWorkflowId(delivery.envelopeId, delivery.series),
    taskQueue: starter.taskQueue,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    args: [input] as [WebhookDeliveryInput],
    typedSearchAttributes: attributes,
    staticSummary: `${delivery.event} to endpoint ${delivery.endpointId}`,
  } as const;
}

/**
 * Starts the delivery workflow of one series; false when it is already running or has already
 * finished. A finished execution is only replaced when it failed or was terminated, so a late
 * duplicate start can never post a settled delivery again. On a worker the series' first attempt
 * is posted here, once its workflow has started and only by the start that did it.
 */
export async function startDelivery(starter: Starter, delivery: RecordedDelivery): Promise<boolean> {
  const { firstAttempts } = starter;
  const input: WebhookDeliveryInput = { deliveryId: delivery.deliveryId, series: delivery.series };
  try {
    await starter.client.workflow.start<typeof webhookDeliveryWorkflow>(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      ...(firstAttempts
        ? {
            ...deliveryStartOptions(starter, delivery, { ...input, firstAttemptByStarter: true }),
            startDelay: WEBHOOK_TAKEOVER_DELAY_MS,
          }
        : deliveryStartOptions(starter, delivery, input)),
      workflowIdConflictPolicy: 'FAIL',
    });
    firstAttempts?.post(delivery);
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/**
 * Tells a series whose starter posted its first attempt that the attempt failed. Only a
 * signal-with-start cuts a start delay short (a plain signal waits it out), so this is one, and it
 * starts the series at once if its execution is somehow gone.
 */
export async function reportFirstAttemptFailed(starter: Starter, delivery: RecordedDelivery): Promise<void> {
  await starter.client.workflow.signalWithStart<typeof webhookDeliveryWorkflow, []>(
    WEBHOOK_DELIVERY_WORKFLOW_TYPE,
    {
      ...deliveryStartOptions(starter, delivery, {
        deliveryId: delivery.deliveryId,
        series: delivery.series,
        firstAttemptByStarter: true,
      }),
      workflowIdConflictPolicy: 'USE_EXISTING',
      signal: firstAttemptFailedSignal,
      signalArgs: [],
    },
  );
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
