import { NotFoundError } from '../../core/errors/app-error';
import type { NotificationHub } from '../../core/db/notification-hub';
import { sseStreamsOpen } from '../../core/metrics/registry';
import { explainRunMiss, selectRunEvents, type RunEventRow, type RunScope } from '../../core/runs/store';
import {
  TERMINAL_RUN_STATUSES,
  toToolCallDto,
  toWaitpointDto,
  type RunSnapshot,
} from '../../core/schemas/runs';
import type { OperationDeps } from '../deps';
import type { OpenWait } from '../streams';
import { loadSnapshotAt } from './snapshot';
import { wakeUps } from '../wake-ups';

/** Events read per statement; a stream far behind catches up in pages. */
const PAGE = 200;

export type RunStreamEvent =
  | { kind: 'event'; id: number; event: string; data: unknown }
  /** Nothing happened for a while: the transport sends a comment. */
  | { kind: 'heartbeat' };

export interface OpenStreamInput {
  /** `Last-Event-ID`: the stream resumes after this event, without the snapshot. */
  after?: number;
  /** Ends the stream (the client went away). */
  signal: AbortSignal;
}

const isTerminal = (status: string) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(status);

/** An event as the API shows it: rows in the snapshot's shapes, the rest as recorded. */
export function toStreamEvent(row: RunEventRow): Extract<RunStreamEvent, { kind: 'event' }> {
  const data =
    row.type === 'tool.started' || row.type === 'tool.finished'
      ? toToolCallDto(row.data)
      : row.type === 'waitpoint.opened' || row.type === 'waitpoint.resolved'
        ? toWaitpointDto(row.data as unknown as Parameters<typeof toWaitpointDto>[0])
        : row.data;
  return { kind: 'event', id: Number(row.seq), event: row.type, data };
}

/**
 * A run's live stream: the snapshot, with the number of the last event it reflects as its id,
 * then every event after it in the order it was committed (see migration run_events), until the
 * run's terminal status. Checked against the caller's chats before anything is sent: a run that
 * is not theirs is a 404, and then nothing is streamed. It holds `wait`, one of the user's open
 * streams (operations/streams.ts), and gives it back when it ends: at the run's end, the client's
 * going, or the end of the credential it was opened with (a key revoked, a session signed out or
 * expired), which `wait.signal` tells.
 */
export async function openRunStream(
  deps: OperationDeps,
  hub: NotificationHub,
  scope: RunScope,
  input: Omit<OpenStreamInput, 'signal'>,
  wait: OpenWait,
): Promise<AsyncGenerator<RunStreamEvent>> {
  const { signal } = wait;
  const wakes = wakeUps(signal);
  // Keeps proxies from closing an idle stream. Not a read: every append notifies (migration
  // run_events), and the hub wakes every subscriber when its connection is lost or regained, the
  // one way a notification can go unheard; so an idle stream costs the database nothing.
  const heartbeatMs = deps.config.STREAM_HEARTBEAT_INTERVAL;
  // Subscribed before the first read, so nothing committed after that read goes unnoticed.
  const unsubscribeRun = hub.subscribe('run_events', scope.runId, wakes.wake);
  const unsubscribe = () => {
    unsubscribeRun();
    wait.close();
  };
  let first: RunStreamEvent | undefined;
  let endedAtSnapshot = false;
  let cursor: number;
  try {
    const resumed =
      input.after === undefined ? undefined : await selectRunEvents(deps.db.pool, scope, input.after, 0);
    if (input.after !== undefined && !resumed) {
      const miss = await explainRunMiss(deps.db.pool, scope);
      throw new NotFoundError(miss === 'CHAT_NOT_FOUND' ? miss : 'RUN_NOT_FOUND', 'Run not found.');
    }
    // A resume after the run's events were pruned (RUN_EVENTS_RETENTION) cannot be answered with
    // what followed the client's event: it gets the final snapshot, as a stream opened afresh does.
    if (input.after === undefined || resumed?.pruned) {
      const { snapshot, eventSeq } = await loadSnapshotAt(deps, scope);
      first = { kind: 'event', id: eventSeq, event: 'snapshot', data: snapshot satisfies RunSnapshot };
      cursor = eventSeq;
      endedAtSnapshot = isTerminal(snapshot.status);
    } else {
      cursor = input.after;
    }
  } catch (err) {
    unsubscribe();
    throw err;
  }

  async function* stream(): AsyncGenerator<RunStreamEvent> {
    sseStreamsOpen.inc();
    try {
      if (first) {
        // Not held for the stream's life: an idle stream keeps no snapshot (bench row `streams`).
        const snapshot = first;
        first = undefined;
        yield snapshot;
        if (endedAtSnapshot) return;
      }
      while (!signal.aborted) {
        wakes.clear();
        const page = await selectRunEvents(deps.db.pool, scope, cursor, PAGE);
        // The chat was deleted meanwhile: its run is gone for the caller too.
        if (!page) return;
        for (const row of page.events) {
          const event = toStreamEvent(row);
          cursor = Number(row.seq);
          yield event;
          if (row.type === 'status' && isTerminal(String(row.data.status))) return;
        }
        if (page.events.length === PAGE) continue;
        // Ended, and every event of it already sent (a resume after the terminal status).
        if (isTerminal(page.status)) return;
        while (await wakes.wait(heartbeatMs)) yield { kind: 'heartbeat' };
      }
    } finally {
      sseStreamsOpen.dec();
      unsubscribe();
    }
  }
  return stream();
}
