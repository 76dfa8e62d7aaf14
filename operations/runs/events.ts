import { NotFoundError } from '../../core/errors/app-error';
import type { Channel, NotificationHub } from '../../core/db/notification-hub';
import { explainRunMiss, selectRunEvents, type RunEventRow, type RunScope } from '../../core/runs/store';
import {
  TERMINAL_RUN_STATUSES,
  toToolCallDto,
  toWaitpointDto,
  type RunSnapshot,
} from '../../core/schemas/runs';
import type { Caller, OperationDeps } from '../deps';
import { apiKeyIsLive, sessionRemainingMs } from '../../core/identity/store';
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
function toStreamEvent(row: RunEventRow): RunStreamEvent {
  const data =
    row.type === 'tool.started' || row.type === 'tool.finished'
      ? toToolCallDto(row.data)
      : row.type === 'waitpoint.opened' || row.type === 'waitpoint.resolved'
        ? toWaitpointDto(row.data as unknown as Parameters<typeof toWaitpointDto>[0])
        : row.data;
  return { kind: 'event', id: Number(row.seq), event: row.type, data };
}

/**
 * What a stream was opened with (an API key, a console session), which it must not outlive: the
 * channel its end is notified on and its id there, and whether it works now, with for how much
 * longer in ms (a session expires; a key does not).
 */
export interface StreamCredential {
  channel: Extract<Channel, 'api_keys' | 'sessions'>;
  id: string;
  check(): Promise<{ remainingMs?: number } | undefined>;
}

/** What the caller's stream must not outlive: its API key, or its console session. */
export function credentialOf(deps: OperationDeps, caller: Caller): StreamCredential | undefined {
  const { apiKeyId, sessionId } = caller;
  if (apiKeyId)
    return {
      channel: 'api_keys',
      id: apiKeyId,
      check: async () => ((await apiKeyIsLive(deps.db, apiKeyId)) ? {} : undefined),
    };
  if (sessionId)
    return {
      channel: 'sessions',
      id: sessionId,
      check: async () => {
        const remainingMs = await sessionRemainingMs(deps.db, sessionId);
        return remainingMs === undefined ? undefined : { remainingMs };
      },
    };
  return undefined;
}

/**
 * A run's live stream: the snapshot, with the number of the last event it reflects as its id,
 * then every event after it in the order it was committed (see migration run_events), until the
 * run's terminal status. Checked against the caller's chats before anything is sent: a run that
 * is not theirs is a 404, and then nothing is streamed. It ends when its `credential` stops
 * working (a key revoked, a session signed out or expired), as the caller's next request is
 * refused: a stream of a run waiting on its plan could otherwise go on for a day on a key its
 * owner took back, or in a console its person signed out of.
 */
export async function openRunStream(
  deps: OperationDeps,
  hub: NotificationHub,
  scope: RunScope,
  input: OpenStreamInput,
  credential: StreamCredential | undefined,
): Promise<AsyncGenerator<RunStreamEvent>> {
  const wakes = wakeUps(input.signal);
  // Keeps proxies from closing an idle stream, and re-reads the table in case a notification was lost.
  const heartbeatMs = deps.config.STREAM_HEARTBEAT_INTERVAL;
  // When the credential is checked next: at once when its end may have been notified; otherwise
  // once, one heartbeat interval after the open, however busy the stream, for an end between the
  // request's check and the subscription below (unheard). Not at once: a burst of streams opening
  // would each cost a query, and the gateway memory per stream (bench row `streams`).
  let checkAt = credential ? Date.now() + heartbeatMs : Infinity;
  // A session's expiry (ms since the epoch, by this clock), learned at its check: no notification
  // announces it.
  let expiresAt = Infinity;
  // Subscribed before the first read, so nothing committed after that read goes unnoticed.
  const unsubscribeRun = hub.subscribe('run_events', scope.runId, wakes.wake);
  // The credential's end, or the listening connection changing (an end meanwhile is unheard).
  const unsubscribeCredential = credential
    ? hub.subscribe(credential.channel, credential.id, () => {
        checkAt = 0;
        wakes.wake();
      })
    : () => undefined;
  const unsubscribe = () => {
    unsubscribeRun();
    unsubscribeCredential();
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
    try {
      if (first) {
        // Not held for the stream's life: an idle stream keeps no snapshot (bench row `streams`).
        const snapshot = first;
        first = undefined;
        yield snapshot;
        if (endedAtSnapshot) return;
      }
      while (!input.signal.aborted) {
        // Cleared before the credential's check too: an end heard during it wakes the next wait.
        wakes.clear();
        if (credential && Date.now() >= checkAt) {
          checkAt = Infinity;
          const live = await credential.check();
          // Ended: the client's reconnect is told 401, which names why.
          if (!live) return;
          expiresAt = live.remainingMs === undefined ? Infinity : Date.now() + live.remainingMs;
        }
        if (Date.now() >= expiresAt) return;
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
        // Woken at the session's expiry too, to end there rather than at the next heartbeat.
        const untilExpiry = expiresAt - Date.now();
        if (untilExpiry < heartbeatMs) {
          await wakes.wait(Math.max(untilExpiry, 0));
          continue;
        }
        if (await wakes.wait(heartbeatMs)) yield { kind: 'heartbeat' };
      }
    } finally {
      unsubscribe();
    }
  }
  return stream();
}
