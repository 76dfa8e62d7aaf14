import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/**
 * The webhook events and the tool result, as zod schemas: the one source of their types, of the
 * OpenAPI document's components, and of what MCP tools declare as their output.
 */

/** The four webhook event kinds of the spec; endpoints subscribe to a non-empty subset. */
export const WEBHOOK_EVENTS = ['agent.started', 'agent.completed', 'agent.failed', 'tool.completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const toolAssetSchema = z
  .object({
    url: z.string(),
    mimeType: z.string(),
    filename: z.string().optional(),
  })
  .openapi('ToolAsset');
export type ToolAsset = z.infer<typeof toolAssetSchema>;

/** The spec's Tool result. */
export const toolResultSchema = z
  .object({
    toolName: z.string(),
    output: z
      .object({ url: z.string(), provider: z.string() })
      .catchall(z.unknown())
      .describe('Provider output; always the result URL and the provider that made it.'),
    assets: z.array(toolAssetSchema),
    creditCost: z.string().describe('Credits charged for this call, a decimal string.'),
    durationMs: z.number().int(),
    providerRunId: z.string(),
  })
  .openapi('ToolResult');
export type ToolResult = z.infer<typeof toolResultSchema>;

/** `data` of agent.* events: all strings, as the spec says. */
export const agentEventDataSchema = z
  .object({
    chatId: z.string(),
    runId: z.string(),
    messageId: z.string(),
    traceId: z.string().describe('The W3C trace id of the admitting request.'),
    processId: z.string().describe('The Temporal workflow run id.'),
    status: z.enum(['QUEUED', 'COMPLETE', 'FAILED', 'CANCELLED']),
    assistantMessageId: z.string(),
    error: z.string().optional().describe('Why a turn FAILED.'),
  })
  .openapi('AgentEventData');
export type AgentEventData = z.infer<typeof agentEventDataSchema>;

export const toolCompletedDataSchema = toolResultSchema
  .extend({ toolCallId: z.string(), chatId: z.string().optional(), runId: z.string().optional() })
  .openapi('ToolCompletedData');
export type ToolCompletedData = z.infer<typeof toolCompletedDataSchema>;

/**
 * One event for the outbox. The idempotency key is the run id for agent events and the tool call
 * id for tool.completed, so recording the same event twice posts nothing new.
 */
export type EmitWebhookEventInput =
  | {
      userId: string;
      event: 'agent.started' | 'agent.completed' | 'agent.failed';
      idempotencyKey: string;
      data: AgentEventData;
    }
  | { userId: string; event: 'tool.completed'; idempotencyKey: string; data: ToolCompletedData };
