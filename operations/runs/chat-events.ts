import { NotFoundError } from '../../core/errors/app-error';
import type { NotificationHub } from '../../core/db/notification-hub';
import { selectChatEvents, selectChatSnapshot, type ChatScope } from '../../core/runs/store';
import type { RunSnapshot } from '../../core/schemas/runs';
import type { OperationDeps } from '../deps';
import type { OpenWait } from '../streams';
import { toStreamEvent, type OpenStreamInput } from './events';
import { snapshotOf } from './snapshot';
import { wakeUps } from '../wake-ups';

/** Events read per statement; a stream far behind catches up in pages. */
const PAGE = 200;

/** The chat's unfinished runs: its head first, then its queue in order. */
export interface ChatSnapshot {
  chatId: string;
  runs: RunSnapshot[];
}

export type ChatStreamEvent =
  | { kind: 'event'; id: number; event: 'snapshot'; data: ChatSnapshot }
  | { kind: 'event'; id: number; event: string; data: { runId: string; data: unknown } }
  /** Nothing happened for a while: the transport sends a comment. */
  | { kind: 'heartbeat' }
  /** Every event so far was yielded; the stream waits for the next (a long poll answers here). */
  | { kind: 'caught-up' };

/**
 * A chat's live stream, for the tabs and devices that follow one chat: the chat's snapshot (its
 * unfinished runs) with the number of the last event it reflects as its id, then every event of
 * every run of the chat after it, in the order they were committed (migration chat_events): runs
 * queued, starting, streaming, waiting on a plan and ending. It goes on while the chat does: until
 * the client goes away, the chat is deleted, or the credential it was opened with ends (which
 * `wait.signal` tells). A resume whose events were pruned meanwhile (RUN_EVENTS_RETENTION), or
 * with a number the chat has not reached, gets a fresh snapshot, never a stream with a gap.
 */
export async function openChatStream(
  deps: OperationDeps,
  hub: NotificationHub,
  scope: ChatScope,
  input: Omit<OpenStreamInput, 'signal'>,
  wait: Pick<OpenWait, 'signal' | 'close'>,
): Promise<AsyncGenerator<ChatStreamEvent>> {
  const { signal } = wait;
  const wakes = wakeUps(signal);
  // Not a read while idle, as a run's stream (operations/runs/events.ts): every event notifies.
  const heartbeatMs = deps.config.STREAM_HEARTBEAT_INTERVAL;
  // Subscribed before the first read, so nothing committed after that read goes unnoticed.
  const unsubscribeChat = hub.subscribe('chat_events', scope.chatId, wakes.wake);
  const unsubscribe = () => {
    unsubscribeChat();
    wait.close();
  };

  const snapshot = async (): Promise<
    { kind: 'event'; id: number; event: 'snapshot'; data: ChatSnapshot } | undefined
  > => {
    const row = await selectChatSnapshot(deps.db.pool, scope);
    if (!row) return undefined;
    const runs = row.runs.map((run) => snapshotOf(deps, run, scope.userId));
    return {
      kind: 'event',
      id: Number(row.eventSeq),
      event: 'snapshot',
      data: { chatId: scope.chatId, runs },
    };
  };

  let first: ChatStreamEvent | undefined;
  let cursor = input.after ?? 0;
  try {
    if (input.after === undefined) {
      first = await snapshot();
      if (!first) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
      cursor = first.id;
    } else if (!(await selectChatEvents(deps.db.pool, scope, input.after, 0))) {
      throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
    }
  } catch (err) {
    unsubscribe();
    throw err;
  }

  async function* stream(): AsyncGenerator<ChatStreamEvent> {
    try {
      if (first) {
        // Not held for the stream's life: an idle stream keeps no snapshot.
        const opening = first;
        first = undefined;
        yield opening;
      }
      while (!signal.aborted) {
        wakes.clear();
        const page = await selectChatEvents(deps.db.pool, scope, cursor, PAGE);
        // The chat was deleted meanwhile.
        if (!page) return;
        const lastSeq = Number(page.lastSeq);
        const next = page.events[0] ? Number(page.events[0].seq) : lastSeq + 1;
        if (cursor > lastSeq || next !== cursor + 1) {
          const fresh = await snapshot();
          if (!fresh) return;
          cursor = fresh.id;
          yield fresh;
          continue;
        }
        for (const row of page.events) {
          const { id, event, data } = toStreamEvent(row);
          cursor = id;
          yield { kind: 'event', id, event, data: { runId: row.runId, data } };
        }
        if (page.events.length === PAGE) continue;
        yield { kind: 'caught-up' };
        while (await wakes.wait(heartbeatMs)) yield { kind: 'heartbeat' };
      }
    } finally {
      unsubscribe();
    }
  }
  return stream();
}

/**
 * The chat's events after `after` (or its snapshot first), as a long poll: what the stream has
 * once it has caught up with at least one event, or nothing at `signal`'s abort (the caller's
 * time is up).
 */
export async function collectChatEvents(
  stream: AsyncGenerator<ChatStreamEvent>,
): Promise<Extract<ChatStreamEvent, { kind: 'event' }>[]> {
  const events: Extract<ChatStreamEvent, { kind: 'event' }>[] = [];
  try {
    for await (const e of stream) {
      if (e.kind === 'event') events.push(e);
      else if (e.kind === 'caught-up' && events.length > 0) break;
    }
  } finally {
    await stream.return(undefined);
  }
  return events;
}
