import { runMetadataSchema } from './metadata';
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  exampleAgentEventData,
  exampleEndpoint,
  exampleToolCompletedData,
  exampleToolResult,
} from './examples';
import { runUsageSchema } from './agent';

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
  .openapi('ToolAsset', { example: exampleToolResult.assets[0] });
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
  .openapi('ToolResult', { example: exampleToolResult });
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
    usage: runUsageSchema.optional().openapi({
      description: "agent.completed and agent.failed: the run's tokens and credits (an extension).",
    }),
    metadata: runMetadataSchema.optional().openapi({
      description: "The send's metadata (extension); left out when it has none.",
      'x-extension': true,
    }),
  })
  .openapi('AgentEventData', { example: exampleAgentEventData });
export type AgentEventData = z.infer<typeof agentEventDataSchema>;

export const toolCompletedDataSchema = toolResultSchema
  .extend({ toolCallId: z.string(), chatId: z.string().optional(), runId: z.string().optional() })
  .openapi('ToolCompletedData', { example: exampleToolCompletedData });
export type ToolCompletedData = z.infer<typeof toolCompletedDataSchema>;

/** The headers of every delivery (see core/webhooks/signing webhookHeaders). */
export const webhookHeadersSchema = z.object({
  'x-svc-signature': z.string().openapi({
    description:
      '`sha256=` + hex HMAC-SHA256, keyed with the endpoint secret, over `<x-svc-timestamp>.<raw body>`.',
    example: 'sha256=5d41402abc4b2a76b9719d911017c592ae2c8d5c1a1f9b3c8c1e0b7b1a2c3d4e',
  }),
  'x-svc-timestamp': z
    .string()
    .openapi({ description: 'Unix seconds when this attempt was signed.', example: '1795000000' }),
  'x-svc-event': z.enum(WEBHOOK_EVENTS).openapi({ description: 'The event name, as in the body.' }),
  'x-svc-delivery-id': z.string().openapi({ description: 'The delivery, the same on every retry of it.' }),
});

/** The status an agent event's example carries. */
const AGENT_EVENT_STATUS = {
  'agent.started': 'QUEUED',
  'agent.completed': 'COMPLETE',
  'agent.failed': 'FAILED',
} as const;

/** agent.started carries no usage: the run has used nothing yet. */
const { usage: _usage, ...startedEventData } = exampleAgentEventData;

/** The body a receiver gets for `event`: the envelope, with that event's data. */
export function webhookEnvelopeSchema(event: WebhookEvent) {
  return z
    .object({
      id: z.string().openapi({ description: 'wh:{endpointId}:{event}:{runId or toolCallId}: dedupe on it.' }),
      event: z.literal(event),
      createdAt: z.iso.datetime(),
      data: event === 'tool.completed' ? toolCompletedDataSchema : agentEventDataSchema,
    })
    .openapi(`WebhookEnvelope_${event.replace('.', '_')}`, {
      example: {
        id: `wh:${exampleEndpoint.id}:${event}:${event === 'tool.completed' ? exampleToolCompletedData.toolCallId : exampleAgentEventData.runId}`,
        event,
        createdAt: '2026-11-23T09:30:21.050Z',
        data:
          event === 'tool.completed'
            ? exampleToolCompletedData
            : event === 'agent.started'
              ? { ...startedEventData, status: AGENT_EVENT_STATUS[event] }
              : { ...exampleAgentEventData, status: AGENT_EVENT_STATUS[event] },
      },
    });
}
