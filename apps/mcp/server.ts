import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Config } from '../../core/config/config';
import type { Logger } from '../../core/logging/logger';
import type { ErrorEnvelope } from '../../core/schemas/errors';
import type { Caller, Operations } from '../../operations';
import { errorEnvelope, toAppError } from '../../core/errors/envelope';
import { registerResources } from './resources';
import { parseArguments, TOOL_LIST, toolNamed } from './tools';

const INSTRUCTIONS =
  'Chats with an agent that can crop images, generate images and merge videos. Start or continue a ' +
  'chat with send_message, then follow the run with wait_for_run (repeat while it is RUNNING). A run ' +
  'in planMode stops WAITING with a plan: approve or reject it with decide_plan. The media tools can ' +
  'also be called directly.';

/**
 * A failure of the work is the tool's answer, not a protocol error, so the model can read it: the
 * REST envelope (same code, message, details and facts) as structuredContent.
 */
function toolError(err: unknown, logger: Logger): CallToolResult {
  const appError = toAppError(err);
  if (appError.code === 'INTERNAL') logger.error({ err }, 'mcp tool failed');
  // The same facts REST gives (RUN_ACTIVE names the active run, for one). An operation names a
  // field where REST takes it (`body.image_urls.1`); an assistant gave it in the tool's arguments.
  const envelope = errorEnvelope(appError) as ErrorEnvelope;
  if (envelope.details)
    envelope.details = envelope.details.map((d) => ({
      ...d,
      path: d.path.replace(/^body(?=\.|$)/, 'arguments'),
    }));
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope,
  };
}

/**
 * Left to itself, the SDK builds a JSON Schema validator (a new Ajv, about a millisecond) for every
 * server, that is for every request; one serves them all.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * The MCP server of one request: built for its caller and dropped with its answer, so no gateway
 * keeps anything between requests and any gateway serves any request.
 */
export function createMcpServer(ctx: {
  ops: Operations;
  caller: Caller;
  config: Config;
  logger: Logger;
}): Server {
  const server = new Server(
    { name: 'agent-chat-service', title: 'Agent Chat Service', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: { subscribe: true } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  registerResources(server, ctx);

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args, _meta } = request.params;
    const tool = toolNamed(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const progressToken = _meta?.progressToken;
    let sent = 0;
    const progress = async (message: string) => {
      if (progressToken === undefined) return;
      sent += 1;
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: sent, message },
      });
    };
    try {
      const { input, idempotencyKey } = parseArguments(tool, args ?? {});
      const { result, content } = await tool.run(
        {
          ops: ctx.ops,
          caller: ctx.caller,
          config: ctx.config,
          progress,
          signal: extra.signal,
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        },
        input,
      );
      return {
        content: [{ type: 'text', text: JSON.stringify(result) }, ...(content ?? [])],
        structuredContent: result as Record<string, unknown>,
      };
    } catch (err) {
      return toolError(err, ctx.logger);
    }
  });

  return server;
}
