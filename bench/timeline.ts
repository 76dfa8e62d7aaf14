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

/** When an execution started and when its first workflow task started, on the wall clock. */
export async function executionStart(
  handle: WorkflowHandle,
): Promise<{ started: number; taskStarted: number }> {
  const { events } = await handle.fetchHistory();
  const at = (type: temporal.api.enums.v1.EventType) => {
    const time = events?.find((e) => e.eventType === type)?.eventTime;
    if (!time) throw new Error(`${handle.workflowId} has no event of type ${EventType[type]}`);
    return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
  };
  return {
    started: at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
    taskStarted: at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED),
  };
}

/**
 * Each part's p50 over the samples, printed as one line. The parts' p50s need not sum to the
 * whole's: each is the middle of its own spread.
 */
export function timelineOf<Part extends string>(
  what: string,
  parts: Record<Part, number[]>,
): Record<Part, number> {
  const medians = Object.fromEntries(
    Object.entries<number[]>(parts).map(([part, values]) => [
      part,
      quantile(
        [...values].sort((a, b) => a - b),
        0.5,
      ),
    ]),
  ) as Record<Part, number>;
  const line = Object.entries<number>(medians)
    .map(([part, ms]) => `${part} ${fmt(ms)}`)
    .join(', ');
  console.log(`bench: ${what} at p50, ms: ${line}`);
  return medians;
}
