import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The wire protocols the service's providers speak (docs/models.md). */
export type FakeProtocol = 'openai' | 'anthropic' | 'google' | 'openai-compatible';

export interface FakeToolCall {
  id: string;
  name: string;
  /** The arguments' JSON in the pieces it streams in (Gemini sends a call whole: joined). */
  argumentChunks: string[];
}

/** What the fake answers to one request. */
export type FakeAnswer =
  | {
      kind: 'stream';
      text?: string[];
      toolCalls?: FakeToolCall[];
      /** Tokens as the provider reports them; cached input is part of the input. */
      usage?: { input: number; output: number; cached?: number };
    }
  /** An error answer; `retryAfter` sets the `retry-after` header (seconds). */
  | { kind: 'error'; status: number; message?: string; retryAfter?: string }
  /** The provider's own answer for a prompt longer than the model's window. */
  | { kind: 'context-length' }
  /** The stream starts, sends this text, and the connection is cut. */
  | { kind: 'cut'; text: string[] }
  | { kind: 'hang' };

export interface FakeRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/**
 * A model provider on loopback, speaking its HTTP protocol as the provider documents it: OpenAI's
 * Responses API (`POST /v1/responses`, semantic server-sent events), Anthropic's Messages API
 * (`POST /v1/messages`, typed events), Google's Gemini API (`POST
 * /v1beta/models/{model}:streamGenerateContent?alt=sse`) and an OpenAI-compatible Chat Completions
 * server (`POST /v1/chat/completions`, `chat.completion.chunk`s and `[DONE]`). Each request takes
 * the next scripted answer (a short text when none is left).
 */
export interface FakeModelServer {
  protocol: FakeProtocol;
  /** The base URL a model entry names (`baseUrl`). */
  baseURL: string;
  requests: FakeRequest[];
  script(...answers: FakeAnswer[]): void;
  close(): Promise<void>;
}

const PATHS: Record<FakeProtocol, RegExp> = {
  openai: /^\/v1\/responses$/,
  anthropic: /^\/v1\/messages$/,
  google: /^\/v1beta\/models\/[^/:]+:streamGenerateContent\?alt=sse$/,
  'openai-compatible': /^\/v1\/chat\/completions$/,
};

const BASE_PATHS: Record<FakeProtocol, string> = {
  openai: '/v1',
  anthropic: '/v1',
  google: '/v1beta',
  'openai-compatible': '/v1',
};

export async function startFakeModelServer(protocol: FakeProtocol): Promise<FakeModelServer> {
  const answers: FakeAnswer[] = [];
  const requests: FakeRequest[] = [];
  const open = new Set<ServerResponse>();

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !PATHS[protocol].test(req.url ?? '')) {
        json(res, 404, errorBody(protocol, 404, 'not found'));
        return;
      }
      requests.push({
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      const answer = answers.shift() ?? { kind: 'stream', text: ['ok'] };
      switch (answer.kind) {
        case 'hang':
          open.add(res);
          return;
        case 'error':
          json(res, answer.status, errorBody(protocol, answer.status, answer.message ?? 'fake error'), {
            ...(answer.retryAfter ? { 'retry-after': answer.retryAfter } : {}),
          });
          return;
        case 'context-length':
          json(res, 400, contextLengthBody(protocol));
          return;
        case 'cut': {
          open.add(res);
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          // The stream without its last two events (its end and usage), then the connection drops.
          for (const e of encode(protocol, { kind: 'stream', text: answer.text }).slice(0, -2)) res.write(e);
          setTimeout(() => res.destroy(), 20);
          return;
        }
        case 'stream':
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          for (const e of encode(protocol, answer)) res.write(e);
          res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    protocol,
    baseURL: `http://127.0.0.1:${port}${BASE_PATHS[protocol]}`,
    requests,
    script: (...more) => answers.push(...more),
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Each provider's error envelope. */
function errorBody(protocol: FakeProtocol, status: number, message: string): unknown {
  switch (protocol) {
    case 'anthropic': {
      const type =
        status === 429
          ? 'rate_limit_error'
          : status === 401
            ? 'authentication_error'
            : status === 529
              ? 'overloaded_error'
              : status >= 500
                ? 'api_error'
                : 'invalid_request_error';
      return { type: 'error', error: { type, message } };
    }
    case 'google': {
      const statusName =
        status === 429
          ? 'RESOURCE_EXHAUSTED'
          : status === 401
            ? 'UNAUTHENTICATED'
            : status >= 500
              ? 'INTERNAL'
              : 'INVALID_ARGUMENT';
      return { error: { code: status, message, status: statusName } };
    }
    case 'openai':
    case 'openai-compatible':
      return {
        error: {
          message,
          type:
            status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error',
          param: null,
          code: null,
        },
      };
  }
}

function contextLengthBody(protocol: FakeProtocol): unknown {
  switch (protocol) {
    case 'anthropic':
      return {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'prompt is too long: 212345 tokens > 200000 maximum',
        },
      };
    case 'google':
      return {
        error: {
          code: 400,
          message: 'The input token count (1212345) exceeds the maximum number of tokens allowed (1048576).',
          status: 'INVALID_ARGUMENT',
        },
      };
    case 'openai':
    case 'openai-compatible':
      return {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      };
  }
}

type Streamed = Extract<FakeAnswer, { kind: 'stream' }>;

/** The answer as the protocol's server-sent events, each a whole `event:`/`data:` frame. */
function encode(protocol: FakeProtocol, answer: Streamed): string[] {
  switch (protocol) {
    case 'openai':
      return responsesEvents(answer);
    case 'anthropic':
      return messagesEvents(answer);
    case 'google':
      return geminiEvents(answer);
    case 'openai-compatible':
      return chatCompletionEvents(answer);
  }
}

const usageOf = (a: Streamed) => a.usage ?? { input: 12, output: 5, cached: 0 };

/** OpenAI Responses API: response.created, output items and their deltas, response.completed. */
function responsesEvents(answer: Streamed): string[] {
  let seq = 0;
  const frame = (data: Record<string, unknown>) =>
    `event: ${String(data.type)}\ndata: ${JSON.stringify({ ...data, sequence_number: seq++ })}\n\n`;
  const response = (status: string, output: unknown[], usage: unknown) => ({
    id: 'resp_fake',
    object: 'response',
    created_at: 1_767_000_000,
    status,
    model: 'fake-model',
    output,
    usage,
  });
  const events = [frame({ type: 'response.created', response: response('in_progress', [], null) })];
  const output: unknown[] = [];
  const text = (answer.text ?? []).join('');
  if (answer.text?.length) {
    const index = output.length;
    const id = 'msg_fake';
    events.push(
      frame({
        type: 'response.output_item.added',
        output_index: index,
        item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
      }),
      frame({
        type: 'response.content_part.added',
        item_id: id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    );
    for (const delta of answer.text) {
      events.push(
        frame({
          type: 'response.output_text.delta',
          item_id: id,
          output_index: index,
          content_index: 0,
          delta,
          logprobs: [],
        }),
      );
    }
    const item = {
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    events.push(
      frame({
        type: 'response.output_text.done',
        item_id: id,
        output_index: index,
        content_index: 0,
        text,
        logprobs: [],
      }),
      frame({ type: 'response.output_item.done', output_index: index, item }),
    );
    output.push(item);
  }
  for (const call of answer.toolCalls ?? []) {
    const index = output.length;
    const id = `fc_${call.id}`;
    const args = call.argumentChunks.join('');
    const base = { type: 'function_call', id, call_id: call.id, name: call.name };
    events.push(
      frame({
        type: 'response.output_item.added',
        output_index: index,
        item: { ...base, arguments: '', status: 'in_progress' },
      }),
    );
    for (const delta of call.argumentChunks) {
      events.push(
        frame({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta }),
      );
    }
    const item = { ...base, arguments: args, status: 'completed' };
    events.push(
      frame({
        type: 'response.function_call_arguments.done',
        item_id: id,
        output_index: index,
        arguments: args,
      }),
      frame({ type: 'response.output_item.done', output_index: index, item }),
    );
    output.push(item);
  }
  const u = usageOf(answer);
  events.push(
    frame({
      type: 'response.completed',
      response: response('completed', output, {
        input_tokens: u.input,
        input_tokens_details: { cached_tokens: u.cached ?? 0 },
        output_tokens: u.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input + u.output,
      }),
    }),
  );
  return events;
}

/**
 * Anthropic Messages: message_start (with the input's usage), a content block per text and per
 * tool_use (its input as input_json_delta pieces), message_delta (stop reason, output usage),
 * message_stop. Anthropic counts cache reads apart from `input_tokens`.
 */
function messagesEvents(answer: Streamed): string[] {
  const frame = (data: Record<string, unknown>) =>
    `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;
  const u = usageOf(answer);
  const cached = u.cached ?? 0;
  const events = [
    frame({
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'fake-model',
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: u.input - cached,
          cache_read_input_tokens: cached,
          cache_creation_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
    frame({ type: 'ping' }),
  ];
  let index = 0;
  if (answer.text?.length) {
    events.push(frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    for (const text of answer.text) {
      events.push(frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }));
    }
    events.push(frame({ type: 'content_block_stop', index }));
    index++;
  }
  for (const call of answer.toolCalls ?? []) {
    events.push(
      frame({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const partial_json of call.argumentChunks) {
      events.push(
        frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
      );
    }
    events.push(frame({ type: 'content_block_stop', index }));
    index++;
  }
  events.push(
    frame({
      type: 'message_delta',
      delta: { stop_reason: answer.toolCalls?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output },
    }),
    frame({ type: 'message_stop' }),
  );
  return events;
}

/**
 * Gemini streamGenerateContent with alt=sse: each event a GenerateContentResponse, text in parts,
 * a function call whole in its part; the last carries finishReason and usageMetadata.
 */
function geminiEvents(answer: Streamed): string[] {
  const frame = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\r\n\r\n`;
  const u = usageOf(answer);
  const usageMetadata = {
    promptTokenCount: u.input,
    candidatesTokenCount: u.output,
    totalTokenCount: u.input + u.output,
    ...(u.cached ? { cachedContentTokenCount: u.cached } : {}),
  };
  const candidate = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...(finishReason ? { finishReason } : {}) }],
    modelVersion: 'fake-model',
    responseId: 'resp_fake',
  });
  const events = (answer.text ?? []).map((text) => frame(candidate([{ text }])));
  const calls = (answer.toolCalls ?? []).map((c) => ({
    functionCall: { name: c.name, args: JSON.parse(c.argumentChunks.join('') || '{}') as unknown },
  }));
  events.push(frame({ ...candidate(calls, 'STOP'), usageMetadata }));
  return events;
}

/** OpenAI-compatible Chat Completions: chunks, the usage chunk (asked with include_usage), [DONE]. */
function chatCompletionEvents(answer: Streamed): string[] {
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'fake-model' };
  const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    frame([{ index: 0, delta: d, finish_reason: finish }]);
  const events = [delta({ role: 'assistant', content: '' })];
  for (const piece of answer.text ?? []) events.push(delta({ content: piece }));
  (answer.toolCalls ?? []).forEach((call, index) => {
    call.argumentChunks.forEach((args, i) =>
      events.push(
        delta({
          tool_calls: [
            i === 0
              ? { index, id: call.id, type: 'function', function: { name: call.name, arguments: args } }
              : { index, function: { arguments: args } },
          ],
        }),
      ),
    );
  });
  events.push(delta({}, answer.toolCalls?.length ? 'tool_calls' : 'stop'));
  const u = usageOf(answer);
  events.push(
    frame([], {
      usage: {
        prompt_tokens: u.input,
        completion_tokens: u.output,
        total_tokens: u.input + u.output,
        prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
      },
    }),
    'data: [DONE]\n\n',
  );
  return events;
}
