/**
 * What Temporal itself recorded of the service's work, read from the histories: how each execution
 * closed, and per activity type how often it was scheduled, attempted and finished, local
 * activities included (their markers). The chaos suite and the cancel races hold these against the
 * rows: a step recorded twice, a tool run twice, a delivery posted more often than Temporal let it,
 * or a run whose execution closed otherwise than its row says, is caught here even when the tables
 * look right.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter, type TypedSearchAttributes } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { waitFor } from './wait';

type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** One activity type in one history. */
export interface ActivityTally {
  /** Activity tasks scheduled, and how they closed. */
  scheduled: number;
  completed: number;
  failed: number;
  timedOut: number;
  canceled: number;
  /** Attempts Temporal made of the scheduled tasks (each task's last Started event names its attempt). */
  attempts: number;
  /** Local activities recorded (one marker each: an execution that finished, with its result or failure). */
  localCompleted: number;
  localFailed: number;
  /** The decoded results of every completion, activity and local alike, in history order. */
  results: unknown[];
}

/** One execution as its history tells it. */
export interface Execution {
  type: string;
  workflowId: string;
  runId: string;
  /** Completed, Failed, Canceled, Terminated, TimedOut, ContinuedAsNew, or Running. */
  closed: string;
  /** A Failed execution's failure type (the ApplicationFailure's `type`). */
  failureType?: string;
  result?: unknown;
  input?: unknown;
  /** Its search attributes, as the listing gave them. */
  attributes: TypedSearchAttributes;
  activities: Map<string, ActivityTally>;
  /**
   * Workflow tasks that timed out or failed (a worker died holding one): each may have taken an
   * execution of a local activity with it that no marker records.
   */
  lostTasks: number;
}

const decode = (payloads: Payloads): unknown => {
  const first = payloads?.payloads?.[0];
  return first ? defaultPayloadConverter.fromPayload(first) : undefined;
};

const emptyTally = (): ActivityTally => ({
  scheduled: 0,
  completed: 0,
  failed: 0,
  timedOut: 0,
  canceled: 0,
  attempts: 0,
  localCompleted: 0,
  localFailed: 0,
  results: [],
});

/** The tally of `type` in `execution` (an empty one when it never ran there). */
export function tallyOf(execution: Execution, type: string): ActivityTally {
  return execution.activities.get(type) ?? emptyTally();
}

/** Every finished execution of an activity type, local or not. */
export const finishedCount = (t: ActivityTally): number =>
  t.completed + t.failed + t.timedOut + t.canceled + t.localCompleted + t.localFailed;

/** Reads one execution's history. */
export async function readExecution(client: Client, info: WorkflowExecutionInfo): Promise<Execution> {
  const history = await client.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
  const activities = new Map<string, ActivityTally>();
  const tally = (type: string) => {
    const found = activities.get(type) ?? emptyTally();
    activities.set(type, found);
    return found;
  };
  const scheduledType = new Map<string, string>();
  const lastAttempt = new Map<string, number>();
  const execution: Execution = {
    type: info.type,
    workflowId: info.workflowId,
    runId: info.runId,
    closed: 'Running',
    attributes: info.typedSearchAttributes,
    activities,
    lostTasks: 0,
  };
  for (const e of history.events ?? []) {
    if (e.workflowExecutionStartedEventAttributes)
      execution.input = decode(e.workflowExecutionStartedEventAttributes.input);
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? '?';
      scheduledType.set(String(e.eventId), type);
      tally(type).scheduled++;
    }
    const started = e.activityTaskStartedEventAttributes;
    if (started) lastAttempt.set(String(started.scheduledEventId), started.attempt ?? 1);
    const closing =
      (e.activityTaskCompletedEventAttributes && 'completed') ||
      (e.activityTaskFailedEventAttributes && 'failed') ||
      (e.activityTaskTimedOutEventAttributes && 'timedOut') ||
      (e.activityTaskCanceledEventAttributes && 'canceled');
    if (closing) {
      const attrs =
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes ??
        e.activityTaskCanceledEventAttributes;
      const id = String(attrs?.scheduledEventId);
      const t = tally(scheduledType.get(id) ?? '?');
      t[closing]++;
      // A task that timed out before any attempt started shows no Started event: it was tried once.
      t.attempts += lastAttempt.get(id) ?? 1;
      if (e.activityTaskCompletedEventAttributes)
        t.results.push(decode(e.activityTaskCompletedEventAttributes.result));
    }
    const marker = e.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const data = decode(marker.details?.data) as { activity_type?: string } | undefined;
      const t = tally(data?.activity_type ?? '?');
      if (marker.failure) t.localFailed++;
      else {
        t.localCompleted++;
        t.results.push(decode(marker.details?.result));
      }
    }
    if (e.workflowTaskTimedOutEventAttributes || e.workflowTaskFailedEventAttributes) execution.lostTasks++;
    if (e.workflowExecutionCompletedEventAttributes) {
      execution.closed = 'Completed';
      execution.result = decode(e.workflowExecutionCompletedEventAttributes.result);
    }
    if (e.workflowExecutionFailedEventAttributes) {
      execution.closed = 'Failed';
      const failure = e.workflowExecutionFailedEventAttributes.failure;
      execution.failureType = failure?.applicationFailureInfo?.type ?? undefined;
    }
    if (e.workflowExecutionCanceledEventAttributes) execution.closed = 'Canceled';
    if (e.workflowExecutionTerminatedEventAttributes) execution.closed = 'Terminated';
    if (e.workflowExecutionTimedOutEventAttributes) execution.closed = 'TimedOut';
    if (e.workflowExecutionContinuedAsNewEventAttributes) execution.closed = 'ContinuedAsNew';
  }
  return execution;
}

/**
 * Every execution `query` (a visibility query) lists, read from its history, once none of them is
 * still running and at least `atLeast` are listed (visibility may lag a moment behind a start or
 * a close). `concurrency` histories at a time.
 */
export async function readExecutions(
  client: Client,
  query: string,
  { timeoutMs = 120_000, concurrency = 8, atLeast = 0 } = {},
): Promise<Execution[]> {
  const infos = await waitFor(
    async () => {
      const listed: WorkflowExecutionInfo[] = [];
      for await (const info of client.workflow.list({ query })) listed.push(info);
      return listed.length >= atLeast && listed.every((i) => i.status.name !== 'RUNNING')
        ? listed
        : undefined;
    },
    { timeoutMs, intervalMs: 500, what: `every execution of ${query} to close` },
  );
  const executions: Execution[] = [];
  const queue = [...infos];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let info = queue.shift(); info; info = queue.shift())
        executions.push(await readExecution(client, info));
    }),
  );
  return executions;
}

/** The run's row status an agent run's execution closed with agrees with (workflows/agent.workflow.ts `end()`). */
export function closedAsRow(execution: Execution, status: string): boolean {
  if (status === 'COMPLETE') return execution.closed === 'Completed';
  if (status === 'FAILED') return execution.closed === 'Failed';
  if (status === 'CANCELLED')
    return (
      execution.closed === 'Canceled' ||
      (execution.closed === 'Failed' &&
        ['RUN_CANCELLED', 'PLAN_REJECTED', 'PLAN_EXPIRED'].includes(execution.failureType ?? ''))
    );
  return false;
}

/** How an execution closed, for a message: `Failed (RUN_CANCELLED)`. */
export const describeClose = (e: Execution): string =>
  `${e.closed}${e.failureType ? ` (${e.failureType})` : ''}`;
