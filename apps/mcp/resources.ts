import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../core/config/config';
import { chatListQuerySchema, chatParamsSchema } from '../../core/schemas/chats';
import { runParamsSchema } from '../../core/schemas/runs';
import type { Caller, Operations } from '../../operations';
import { toAppError } from '../../core/errors/envelope';
import { isSettled } from './tools';

/** The spec's code for a resource that does not exist (or is not the caller's). */
const RESOURCE_NOT_FOUND = -32002;
const JSON_TYPE = 'application/json';

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: 'chat://{chatId}',
    name: 'chat',
    title: 'A chat',
    description:
      'A chat and its latest messages (up to 50, oldest first), as list_chats and get_messages show them.',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'chat://{chatId}/runs/{runId}',
    name: 'run',
    title: 'A run',
    description:
      'A run snapshot, as get_run shows it. Subscribe to be told (notifications/resources/updated) as it changes.',
    mimeType: JSON_TYPE,
  },
];

type Parsed = { kind: 'chat'; chatId: string } | { kind: 'run'; chatId: string; runId: string };

function parseUri(uri: string): Parsed {
  const match = /^chat:\/\/([^/]+)(?:\/runs\/([^/]+))?$/.exec(uri);
  const chat = chatParamsSchema.safeParse({ chatId: match?.[1] });
  if (match?.[2] !== undefined) {
    const run = runParamsSchema.safeParse({ chatId: match[1], runId: match[2] });
    if (run.success) return { kind: 'run', ...run.data };
  } else if (chat.success) return { kind: 'chat', ...chat.data };
  throw new McpError(ErrorCode.InvalidParams, `Not a resource of this server: ${uri}`);
}

/**
 * Chats and runs as resources. Subscriptions on a stateless server: there is no session to send a
 * later notification on, so resources/subscribe holds its own request open (an event stream) and
 * sends notifications/resources/updated on it each time the resource changes, answering once a
 * run has finished or waits for its plan's decision, or after MCP_WAIT_MAX; a client that wants to
 * follow longer subscribes again. Unsubscribe has nothing to end.
 */
export function registerResources(
  server: Server,
  ctx: { ops: Operations; caller: Caller; config: Config },
): void {
  const { ops, caller } = ctx;

  /**
   * A resource the caller cannot see is the spec's not-found error; a refusal of ours (a cap
   * reached, a credential revoked meanwhile) names its code, as a tool's error does.
   */
  function asResourceError(err: unknown, uri: string): unknown {
    const appError = toAppError(err);
    if (appError.status === 404)
      return new McpError(RESOURCE_NOT_FOUND, appError.message, { uri, code: appError.code });
    return appError.status < 500
      ? new McpError(ErrorCode.InvalidRequest, appError.message, { uri, code: appError.code })
      : err;
  }

  async function read(parsed: Parsed, uri: string): Promise<unknown> {
    try {
      return parsed.kind === 'run'
        ? await ops.runs.getRun(caller, parsed)
        : await ops.chats.chatResource(caller, parsed.chatId);
    } catch (err) {
      throw asResourceError(err, uri);
    }
  }

  /**
   * The resource now and each time it may have changed, until `signal` aborts: a run as its
   * notifications tell (ops.runs.watchRun), a chat as its row does (ops.chats.watchChat).
   */
  async function* changes(parsed: Parsed, uri: string, signal: AbortSignal): AsyncGenerator<unknown> {
    try {
      yield* parsed.kind === 'run'
        ? ops.runs.watchRun(caller, parsed, signal)
        : ops.chats.watchChat(caller, parsed.chatId, signal);
    } catch (err) {
      throw asResourceError(err, uri);
    }
  }

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: RESOURCE_TEMPLATES,
  }));

  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const query = chatListQuerySchema.safeParse({ limit: 50, cursor: request.params?.cursor });
    if (!query.success) throw new McpError(ErrorCode.InvalidParams, 'Not a cursor of this list.');
    const page = await ops.chats.listChats(caller, query.data);
    return {
      resources: page.data.map((chat) => ({
        uri: `chat://${chat.id}`,
        name: chat.title,
        mimeType: JSON_TYPE,
      })),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const value = await read(parseUri(uri), uri);
    return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
  });

  server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const parsed = parseUri(uri);
    const signal = AbortSignal.any([extra.signal, AbortSignal.timeout(ctx.config.MCP_WAIT_MAX)]);
    let last: string | undefined;
    for await (const value of changes(parsed, uri, signal)) {
      const json = JSON.stringify(value);
      if (last !== undefined && json !== last)
        await extra.sendNotification({ method: 'notifications/resources/updated', params: { uri } });
      last = json;
      if (parsed.kind === 'run' && isSettled(value as Parameters<typeof isSettled>[0])) break;
    }
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
}
