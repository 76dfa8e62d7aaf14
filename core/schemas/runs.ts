import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING', 'COMPLETE', 'FAILED', 'CANCELLED'] as const;
export const TERMINAL_RUN_STATUSES = ['COMPLETE', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const toolAssetSchema = z.object({
  url: z.string(),
  mimeType: z.string(),
  filename: z.string().optional(),
});

export const toolResultSchema = z
  .object({
    toolName: z.string(),
    output: z.object({ url: z.string(), provider: z.string() }).catchall(z.unknown()),
    assets: z.array(toolAssetSchema),
    creditCost: z.string(),
    durationMs: z.number().int(),
    providerRunId: z.string(),
  })
  .openapi('ToolResult');

export const contentBlockSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text'), text: z.string() }),
    z.object({ type: z.literal('image'), attachmentId: z.string().nullable(), url: z.string() }),
    z.object({ type: z.literal('video'), attachmentId: z.string().nullable(), url: z.string() }),
    z.object({ type: z.literal('audio'), attachmentId: z.string().nullable(), url: z.string() }),
    z.object({
      type: z.literal('tool_use'),
      toolCallId: z.string(),
      toolName: z.string(),
      input: z.unknown(),
    }),
    z.object({
      type: z.literal('tool_result'),
      toolCallId: z.string(),
      toolName: z.string(),
      result: toolResultSchema.optional(),
      error: z.string().optional(),
    }),
  ])
  .openapi('ContentBlock');
export type ContentBlock = z.infer<typeof contentBlockSchema>;

export const planSchema = z.object({
  summary: z.string(),
  steps: z.array(z.object({ toolName: z.string(), input: z.unknown(), reason: z.string() })),
});
export type Plan = z.infer<typeof planSchema>;

export const waitpointSchema = z
  .object({
    id: z.uuid(),
    type: z.literal('PLAN_APPROVAL'),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED']),
    plan: planSchema,
    feedback: z.string().nullable(),
    createdAt: z.iso.datetime(),
    resolvedAt: z.iso.datetime().nullable(),
  })
  .openapi('Waitpoint');

export const runSnapshotSchema = z
  .object({
    id: z.uuid(),
    chatId: z.uuid(),
    messageId: z.uuid(),
    assistantMessageId: z.uuid(),
    status: z.enum(RUN_STATUSES),
    planMode: z.boolean(),
    triggerRunId: z.string().nullable(),
    text: z.string(),
    currentStep: z.number().int(),
    toolCalls: z.array(
      z.object({
        id: z.uuid(),
        toolName: z.string(),
        status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
        input: z.unknown(),
        result: toolResultSchema.nullable(),
        error: z.string().nullable(),
        startedAt: z.iso.datetime(),
        finishedAt: z.iso.datetime().nullable(),
      }),
    ),
    waitpoints: z.array(waitpointSchema),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('RunSnapshot');
export type RunSnapshot = z.infer<typeof runSnapshotSchema>;

export const queuedTurnSchema = z
  .object({
    chatId: z.uuid(),
    messageId: z.uuid(),
    runId: z.uuid(),
    triggerRunId: z.string().nullable(),
    status: z.literal('queued'),
  })
  .openapi('QueuedTurn');
