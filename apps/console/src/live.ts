import { ApiError, V1, request } from './api';
import { isTerminal, type RunSnapshot, type ToolCall, type Waitpoint } from './types';

const POLL_MS = 700;

export interface FollowHandlers {
  onSnapshot: (run: RunSnapshot) => void;
  onError: (error: unknown) => void;
  /** The connection dropped and is being tried again (true), or it is back (false). */
  onReconnecting?: (reconnecting: boolean) => void;
}

type Follow = (chatId: string, runId: string, handlers: FollowHandlers) => () => void;

/**
 * Polling with If-None-Match (a 304 costs a few bytes): the fallback when the stream cannot be had.
 * A poll that cannot reach the service is a connection lost, not an error: the next one may.
 */
const poll: Follow = (chatId, runId, { onSnapshot, onError, onReconnecting = () => undefined }) => {
  let stopped = false;
  let etag: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const once = async () => {
    try {
      const headers: Record<string, string> = etag ? { 'if-none-match': etag } : {};
      const res = await request('GET', `${V1}/chats/${chatId}/runs/${runId}`, undefined, headers);
      if (stopped) return;
      onReconnecting(false);
      if (res.status !== 304) {
        etag = res.headers.get('etag');
        const run = (await res.json()) as RunSnapshot;
        onSnapshot(run);
        if (isTerminal(run.status)) return;
      }
    } catch (error) {
      if (stopped) return;
      if (error instanceof ApiError && error.code === 'NETWORK') onReconnecting(true);
      else onError(error);
    }
    timer = setTimeout(() => void once(), POLL_MS);
  };
  void once();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
};

const upsert = <T extends { id: string }>(list: T[], item: T): T[] =>
  list.some((x) => x.id === item.id) ? list.map((x) => (x.id === item.id ? item : x)) : [...list, item];

/** One stream event applied to the snapshot it follows. */
function apply(run: RunSnapshot, event: string, data: unknown): RunSnapshot {
  switch (event) {
    case 'text.delta':
      return { ...run, text: run.text + (data as { text: string }).text };
    case 'tool.started':
    case 'tool.finished':
      return { ...run, toolCalls: upsert(run.toolCalls, data as ToolCall) };
    case 'waitpoint.opened':
    case 'waitpoint.resolved':
      return { ...run, waitpoints: upsert(run.waitpoints, data as Waitpoint) };
    case 'status': {
      const { status, error } = data as { status: RunSnapshot['status']; error?: string };
      return { ...run, status, error: error ?? run.error };
    }
    default:
      return run;
  }
}

const EVENTS = [
  'snapshot',
  'text.delta',
  'tool.started',
  'tool.finished',
  'waitpoint.opened',
  'waitpoint.resolved',
  'status',
];

/**
 * Follows a run until it ends, calling `onSnapshot` with each new state: the run's live stream
 * (its snapshot, then each change), and polling when the stream cannot be opened or is closed for
 * good before the run ended. After a drop (the network, a gateway restart) the browser opens the
 * stream again by itself, every few seconds, sending `Last-Event-ID`: the gateway goes on after
 * the last event this page applied, so nothing is missed and nothing is applied twice.
 */
export const followRun: Follow = (chatId, runId, handlers) => {
  const { onSnapshot, onReconnecting = () => undefined } = handlers;
  let run: RunSnapshot | null = null;
  let stopPolling: (() => void) | undefined;
  const source = new EventSource(`${V1}/chats/${chatId}/runs/${runId}/events`);
  const fallBack = () => {
    source.close();
    onReconnecting(false);
    stopPolling ??= poll(chatId, runId, handlers);
  };
  source.onopen = () => onReconnecting(false);
  for (const name of EVENTS) {
    source.addEventListener(name, (e) => {
      const data: unknown = JSON.parse((e as MessageEvent<string>).data);
      run = name === 'snapshot' ? (data as RunSnapshot) : run && apply(run, name, data);
      if (!run) return fallBack();
      onSnapshot(run);
      if (isTerminal(run.status)) source.close();
    });
  }
  source.onerror = () => {
    if (run && isTerminal(run.status)) return;
    if (source.readyState === EventSource.CONNECTING) onReconnecting(true);
    else fallBack();
  };
  return () => {
    source.close();
    stopPolling?.();
  };
};
