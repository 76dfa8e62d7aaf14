import { V1, request } from './api';
import { isTerminal, type RunSnapshot, type ToolCall, type Waitpoint } from './types';

const POLL_MS = 700;

type Follow = (
  chatId: string,
  runId: string,
  onSnapshot: (run: RunSnapshot) => void,
  onError: (error: unknown) => void,
) => () => void;

/** Polling with If-None-Match (a 304 costs a few bytes): the fallback when the stream cannot be had. */
const poll: Follow = (chatId, runId, onSnapshot, onError) => {
  let stopped = false;
  let etag: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const once = async () => {
    try {
      const headers: Record<string, string> = etag ? { 'if-none-match': etag } : {};
      const res = await request('GET', `${V1}/chats/${chatId}/runs/${runId}`, undefined, headers);
      if (stopped) return;
      if (res.status !== 304) {
        etag = res.headers.get('etag');
        const run = (await res.json()) as RunSnapshot;
        onSnapshot(run);
        if (isTerminal(run.status)) return;
      }
    } catch (error) {
      if (stopped) return;
      onError(error);
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
 * (its snapshot, then each change; the browser resumes it after a drop with Last-Event-ID), and
 * polling when the stream cannot be opened or is closed for good before the run ended.
 */
export const followRun: Follow = (chatId, runId, onSnapshot, onError) => {
  let run: RunSnapshot | null = null;
  let stopPolling: (() => void) | undefined;
  const source = new EventSource(`${V1}/chats/${chatId}/runs/${runId}/events`);
  const fallBack = () => {
    source.close();
    stopPolling ??= poll(chatId, runId, onSnapshot, onError);
  };
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
    if (source.readyState === EventSource.CLOSED && !(run && isTerminal(run.status))) fallBack();
  };
  return () => {
    source.close();
    stopPolling?.();
  };
};
