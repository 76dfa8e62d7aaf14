/**
 * Workflow histories as the bench reads them: their shape, and where measured operations spent
 * their time (the bench's clock against the times Temporal stamps on a workflow's history events:
 * one machine, one clock), each part summed up at its p50.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { quantile } from './measure';
import { fmt } from './report';

const { EventType } = temporal.api.enums.v1;

/** The machine's clock in ms since the epoch, to the microsecond: the clock Temporal stamps its events with. */
export const wallClock = (): number => performance.timeOrigin + performance.now();

/**
 * When an execution started and, unless `startOnly`, when its first workflow task started, on the
 * wall clock.
 */
export async function executionStart(
  handle: WorkflowHandle,
): Promise<{ started: number; taskStarted: number }>;
export async function executionStart(handle: WorkflowHandle, startOnly: true): Promise<{ started: number }>;
export async function executionStart(
  handle: WorkflowHandle,
  startOnly = false,
): Promise<{ started: number; taskStarted?: number }> {
  const { events } = await handle.fetchHistory();
  const at = (type: temporal.api.enums.v1.EventType) => {
    const time = events?.find((e) => e.eventType === type)?.eventTime;
    if (!time) throw new Error(`${handle.workflowId} has no event of type ${EventType[type]}`);
    return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
  };
  const started = at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  return startOnly ? { started } : { started, taskStarted: at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) };
}

/**
 * Each part's p50 over the samples (one record of parts per measured operation), printed as one
 * line. The parts' p50s need not sum to the whole's: each is the middle of its own spread.
 */
export function timelineOf<Part extends string>(
  what: string,
  samples: Record<Part, number>[],
): Record<Part, number> {
  const parts = Object.keys(samples[0] ?? {}) as Part[];
  const p50 = (part: Part) =>
    quantile(
      samples.map((s) => s[part]).sort((a, b) => a - b),
      0.5,
    );
  const medians = Object.fromEntries(parts.map((part) => [part, p50(part)])) as Record<Part, number>;
  console.log(
    `bench: ${what} at p50, ms: ${parts.map((part) => `${part} ${fmt(medians[part])}`).join(', ')}`,
  );
  return medians;
}

/** What a workflow's history is made of. */
export interface HistoryShape {
  events: number;
  workflowTasks: number;
  activities: number;
  /** local activities (each a marker) */
  localActivities: number;
  /** patch() calls (each a marker) */
  patches: number;
  signals: number;
  /** events by type, e.g. { ActivityTaskScheduled: 1 } */
  byType: Record<string, number>;
}

/** The shape of an execution's history, once it has ended. */
export async function historyShape(handle: WorkflowHandle): Promise<HistoryShape> {
  // The run's row says it ended before the execution's last workflow task has closed it.
  await handle.result();
  const history = await handle.fetchHistory();
  const { events = [] } = JSON.parse(historyToJSON(history)) as {
    events?: { eventType: string; markerRecordedEventAttributes?: { markerName?: string } }[];
  };
  const byType: Record<string, number> = {};
  const markers = (name: string) =>
    events.filter((e) => e.markerRecordedEventAttributes?.markerName === name).length;
  for (const e of events) {
    // EVENT_TYPE_WORKFLOW_TASK_STARTED → WorkflowTaskStarted
    const type = e.eventType
      .replace(/^EVENT_TYPE_/, '')
      .toLowerCase()
      .replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
    byType[type] = (byType[type] ?? 0) + 1;
  }
  return {
    events: events.length,
    workflowTasks: byType.WorkflowTaskStarted ?? 0,
    activities: byType.ActivityTaskScheduled ?? 0,
    localActivities: markers('core_local_activity'),
    patches: markers('core_patch'),
    signals: byType.WorkflowExecutionSignaled ?? 0,
    byType,
  };
}
