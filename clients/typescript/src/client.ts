import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, paths } from './schema.js';
export { API_DOCUMENT } from './version.js';
export type RunSnapshot = components['schemas']['RunSnapshot'];
/** The send's body: only `text` is required. */
export type CompletionRequest = components['schemas']['CompletionRequest'];
export type QueuedTurn = components['schemas']['QueuedTurn'];
export type ApiError = components['schemas']['Error'];

const TERMINAL = new Set(['COMPLETE', 'FAILED', 'CANCELLED']);

/** One event of a run's or a chat's live stream (the `streamRun` and `streamChat` operations). */
export interface RunEvent {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

/** An answer other than the one asked for: its HTTP status and the API's error envelope. */
export class AgentChatError extends Error {
  readonly status: number;
  readonly body: ApiError | undefined;

  constructor(status: number, body: ApiError | undefined) {
    super(body ? `${status} ${body.code}: ${body.error}` : `HTTP ${status}`);
    this.name = 'AgentChatError';
    this.status = status;
    this.body = body;
  }
}

export interface ClientOptions {
  baseUrl: string;
  /**
   * An API key, `svck_live_…`. Left out when something between adds the credential (an app's own
   * server proxying the API for its browser pages, which must never hold a key).
   */
  apiKey?: string;
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /** Each stream event as it arrives (the snapshot first). */
  onEvent?: (event: RunEvent) => void;
  /** How often the polling fallback asks for the snapshot. */
  pollIntervalMs?: number;
  signal?: AbortSignal;
  /** The send's key; a fresh one when left out. */
  idempotencyKey?: string;
}

export function createAgentChatClient(options: ClientOptions) {
  const doFetch = options.fetch ?? fetch;
  const auth: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  /** Every operation of the document, typed: `api.GET('/api/v1/chats')` and so on. */
  const api = createClient<paths>({ baseUrl: options.baseUrl, headers: auth, fetch: doFetch });

  const unwrap = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
    if (result.data === undefined)
      throw new AgentChatError(result.response.status, result.error as ApiError | undefined);
    return result.data;
  };

  /** Queues a turn. A retry with the same `idempotencyKey` is answered with the first answer. */
  async function send(
    body: CompletionRequest,
    idempotencyKey: string = globalThis.crypto.randomUUID(),
  ): Promise<QueuedTurn> {
    return unwrap(
      await api.POST('/api/v1/completions', {
        body,
        headers: { 'idempotency-key': idempotencyKey },
      }),
    );
  }

  async function getRun(ids: { chatId: string; runId: string }) {
    return unwrap(await api.GET('/api/v1/chats/{chatId}/runs/{runId}', { params: { path: ids } }));
  }

  /**
   * A live stream at `url`, event by event, until `ends` says the last has come (or the server
   * ends it: a chat deleted ends its stream with a 404 on the reconnect). A dropped connection is
   * opened again with `Last-Event-ID`, so no event is lost or repeated; five drops in a row without
   * an event between them give up with the last error.
   */
  async function* resumable(
    url: string,
    opts: { lastEventId?: number; signal?: AbortSignal },
    ends: (event: RunEvent) => boolean,
  ): AsyncGenerator<RunEvent> {
    let last = opts.lastEventId;
    for (let drops = 0; ;) {
      const res = await doFetch(url, {
        headers: {
          ...auth,
          accept: 'text/event-stream',
          ...(last !== undefined ? { 'last-event-id': String(last) } : {}),
        },
        signal: opts.signal,
      });
      if (res.status !== 200 || !res.body)
        throw new AgentChatError(
          res.status,
          (await res.json().catch(() => undefined)) as ApiError | undefined,
        );
      let ended = false;
      try {
        for await (const event of parseEventStream(res.body)) {
          last = event.id;
          drops = 0;
          yield event;
          if (ends(event)) ended = true;
        }
      } catch (err) {
        if (opts.signal?.aborted || ++drops >= 5) throw err;
        continue;
      }
      if (ended || opts.signal?.aborted) return;
    }
  }

  /**
   * The run's live stream, event by event, until its terminal status, resumed after a dropped
   * connection (see resumable).
   */
  function streamRun(
    ids: { chatId: string; runId: string },
    opts: { lastEventId?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<RunEvent> {
    return resumable(
      `${options.baseUrl}/api/v1/chats/${ids.chatId}/runs/${ids.runId}/events`,
      opts,
      (event) =>
        (event.event === 'status' || event.event === 'snapshot') && TERMINAL.has(String(event.data.status)),
    );
  }

  /**
   * The chat's live stream: a `snapshot` of its unfinished runs, then every event of each of its
   * runs (`data.runId` names it, `data.data` is the event as the run's stream sends it), for as long
   * as the caller reads, resumed after a dropped connection (see resumable).
   */
  function streamChat(
    chatId: string,
    opts: { lastEventId?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<RunEvent> {
    return resumable(`${options.baseUrl}/api/v1/chats/${chatId}/events`, opts, () => false);
  }

  /**
   * Sends a turn and waits for its run to end (or to wait for a plan decision), following the
   * live stream, or polling the snapshot when the stream cannot be opened. Answers the snapshot.
   */
  async function sendAndWait(body: CompletionRequest, opts: WaitOptions = {}) {
    const turn = await send(body, opts.idempotencyKey);
    const settled = (s: { status: string }) => TERMINAL.has(s.status) || s.status === 'WAITING';
    try {
      for await (const event of streamRun(turn, { signal: opts.signal })) {
        opts.onEvent?.(event);
        const status =
          event.event === 'snapshot' || event.event === 'status' ? String(event.data.status) : '';
        if (TERMINAL.has(status) || status === 'WAITING') break;
      }
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      // No stream (a proxy that refuses it, an older server): poll instead.
    }
    for (;;) {
      const snapshot = await getRun(turn);
      if (settled(snapshot)) return snapshot;
      await new Promise((resolve) => setTimeout(resolve, opts.pollIntervalMs ?? 500));
    }
  }

  /** Approves or rejects the plan a WAITING run put to its user. */
  async function decidePlan(
    ids: { chatId: string; runId: string; waitpointId: string },
    decision: components['schemas']['WaitpointDecision'],
  ) {
    return unwrap(
      await api.POST('/api/v1/chats/{chatId}/runs/{runId}/waitpoints/{waitpointId}/complete', {
        params: { path: ids },
        body: decision,
      }),
    );
  }

  return { api, send, getRun, streamRun, streamChat, sendAndWait, decidePlan };
}

/** Server-Sent Events from a response body, as EventSource parses them (comments skipped). */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<RunEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (!line || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
        }
        if (fields.data === undefined) continue;
        yield {
          id: Number(fields.id),
          event: fields.event ?? 'message',
          data: JSON.parse(fields.data) as Record<string, unknown>,
        };
      }
    }
  } finally {
    // A consumer that stops early drops the connection; after the end this does nothing.
    await reader.cancel().catch(() => undefined);
  }
}
