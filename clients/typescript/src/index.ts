import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
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

/** One event of a run's live stream (see the `streamRun` operation). */
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
  apiKey: string;
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
  const authorization = `Bearer ${options.apiKey}`;
  /** Every operation of the document, typed: `api.GET('/api/v1/chats')` and so on. */
  const api = createClient<paths>({ baseUrl: options.baseUrl, headers: { authorization }, fetch: doFetch });

  const unwrap = <T>(result: { data?: T; error?: unknown; response: Response }): T => {
    if (result.data === undefined)
      throw new AgentChatError(result.response.status, result.error as ApiError | undefined);
    return result.data;
  };

  /** Queues a turn. A retry with the same `idempotencyKey` is answered with the first answer. */
  async function send(body: CompletionRequest, idempotencyKey: string = randomUUID()): Promise<QueuedTurn> {
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
   * The run's live stream, event by event, until its terminal status. A dropped connection is
   * opened again with `Last-Event-ID`, so no event is lost or repeated.
   */
  async function* streamRun(
    ids: { chatId: string; runId: string },
    opts: { lastEventId?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<RunEvent> {
    let last = opts.lastEventId;
    const url = `${options.baseUrl}/api/v1/chats/${ids.chatId}/runs/${ids.runId}/events`;
    for (let reconnects = 0; ; reconnects++) {
      const res = await doFetch(url, {
        headers: {
          authorization,
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
          yield event;
          if (event.event === 'status' && TERMINAL.has(String(event.data.status))) ended = true;
          if (event.event === 'snapshot' && TERMINAL.has(String(event.data.status))) ended = true;
        }
      } catch (err) {
        if (opts.signal?.aborted || reconnects >= 5) throw err;
        continue;
      }
      if (ended || opts.signal?.aborted) return;
    }
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

  return { api, send, getRun, streamRun, sendAndWait, decidePlan };
}

/** Server-Sent Events from a response body, as EventSource parses them (comments skipped). */
export async function* parseEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<RunEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, '\n');
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

/** How old a delivery's timestamp may be: older ones are refused as possible replays. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * True when a webhook delivery is the service's: `x-svc-signature` is `sha256=` + the hex
 * HMAC-SHA256 of `<x-svc-timestamp>.<raw body>` under the endpoint's secret, compared in constant
 * time, and the timestamp is recent. Pass the body exactly as received, before any JSON parsing.
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined> | Headers,
  rawBody: string | Uint8Array,
  now: Date = new Date(),
): boolean {
  const get = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const signature = get('x-svc-signature');
  const timestamp = get('x-svc-timestamp');
  if (!signature || !timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) return false;
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')}`;
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
