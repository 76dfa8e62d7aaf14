/**
 * Where measured operations spent their time: the bench's clock against the times Temporal stamps
 * on a workflow's history events (one machine, one clock), each part summed up at its p50.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { quantile } from './measure';
import { fmt } from './report';

const { EventType } = temporal.api.enums.v1;

/** The machine's clock in ms since the epoch, to the microsecond: the clock Temporal stamps its events with. */
export const wallClock = (): number => performance.timeOrigin + performance.now();

/**
 * When an execution started and, unless `startOnly` (a delivery whose first task waits out its
 * start delay), when its first workflow task started, on the wall clock.
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
