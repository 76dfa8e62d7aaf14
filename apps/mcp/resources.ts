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
import { toAppError } from '../gateway/middleware/errors';
import { isSettled, pause } from './tools';

/** The spec's code for a resource that does not exist (or is not the caller's). */
const RESOURCE_NOT_FOUND = -32002;
/** How often a subscription reads its resource again: one indexed read each. */
const SUBSCRIBE_POLL_MS = 250;
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

  async function read(parsed: Parsed, uri: string): Promise<unknown> {
    try {
      if (parsed.kind === 'run') return await ops.runs.getRun(caller, parsed);
      const [chat, messages] = await Promise.all([
        ops.chats.getChat(caller, parsed.chatId),
        ops.chats.listMessages(caller, parsed.chatId, { limit: 50, order: 'desc' }),
      ]);
      // The latest 50, shown oldest first as get_messages pages them.
      return { chat, messages: messages.data.toReversed() };
    } catch (err) {
      const appError = toAppError(err);
      if (appError.status === 404)
        throw new McpError(RESOURCE_NOT_FOUND, appError.message, { uri, code: appError.code });
      throw err;
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
    const deadline = Date.now() + ctx.config.MCP_WAIT_MAX;
    let last = JSON.stringify(await read(parsed, uri));
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || extra.signal.aborted) return {};
      await pause(Math.min(SUBSCRIBE_POLL_MS, left), extra.signal);
      const value = await read(parsed, uri);
      const json = JSON.stringify(value);
      if (json !== last) {
        last = json;
        await extra.sendNotification({ method: 'notifications/resources/updated', params: { uri } });
      }
      if (parsed.kind === 'run' && isSettled(value as Parameters<typeof isSettled>[0])) return {};
    }
  });

  server.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
}
