import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { MAX_FILES } from '../uploads/receive';
import { NO_NUL, NO_NUL_MESSAGE } from './common';
import { toolResultSchema } from './events';

extendZodWithOpenApi(z);

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING', 'COMPLETE', 'FAILED', 'CANCELLED'] as const;
export const TERMINAL_RUN_STATUSES = ['COMPLETE', 'FAILED', 'CANCELLED'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

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

export type WaitpointDto = z.infer<typeof waitpointSchema>;

/** A Waitpoint row as the API shows it. */
export function toWaitpointDto(row: {
  id: string;
  status: WaitpointDto['status'];
  plan: unknown;
  feedback: string | null;
  createdAt: Date;
  resolvedAt: Date | null;
}): WaitpointDto {
  return {
    id: row.id,
    type: 'PLAN_APPROVAL',
    status: row.status,
    plan: row.plan as Plan,
    feedback: row.feedback,
    createdAt: row.createdAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}

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

// Requests of the runs routes (and the MCP tools that do the same).
const MAX_TEXT = 8192;
const MAX_IMAGE_URLS = 8;
const MAX_FEEDBACK = 2000;

export const completionBodySchema = z
  .object({
    text: z.string().min(1).max(MAX_TEXT).regex(NO_NUL, NO_NUL_MESSAGE),
    chatId: z.uuid().optional(),
    image_urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .max(MAX_IMAGE_URLS)
      .default([]),
    attachmentIds: z.array(z.uuid()).max(MAX_IMAGE_URLS).default([]),
    planMode: z.boolean().default(false),
  })
  .strict()
  .openapi('CompletionRequest');

export const completionFormSchema = z
  .object({
    text: z.string().min(1).max(MAX_TEXT).regex(NO_NUL, NO_NUL_MESSAGE),
    chatId: z.uuid().optional(),
    planMode: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    file: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional()
      .openapi({ description: `repeat for several files; ${MAX_FILES} files in all` }),
    files: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional(),
  })
  .strict()
  .openapi('CompletionForm');

export const runParamsSchema = z.object({ chatId: z.uuid(), runId: z.uuid() });
export const waitpointParamsSchema = runParamsSchema.extend({ waitpointId: z.uuid() });

export const planDecisionSchema = z
  .object({
    approved: z.boolean(),
    feedback: z.string().max(MAX_FEEDBACK).regex(NO_NUL, NO_NUL_MESSAGE).optional(),
  })
  .strict()
  .openapi('WaitpointDecision');
export type PlanDecisionInput = z.output<typeof planDecisionSchema>;

export type CompletionInput = z.output<typeof completionBodySchema>;

export const queuedTurnSchema = z
  .object({
    chatId: z.uuid(),
    messageId: z.uuid(),
    runId: z.uuid(),
    triggerRunId: z.string().nullable(),
    status: z.literal('queued'),
  })
  .openapi('QueuedTurn');

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(v as string).toISOString();

/** A run's row, with its tool calls and waitpoints as JSON (see selectRunSnapshot), as the API shows it. */
export function toRunSnapshot(r: Record<string, unknown>): RunSnapshot {
  const toolCalls = (r.toolCalls as Record<string, unknown>[]).map((t) => ({
    id: t.id as string,
    toolName: t.toolName as string,
    status: t.status as RunSnapshot['toolCalls'][number]['status'],
    input: t.input,
    result: (t.result ?? null) as RunSnapshot['toolCalls'][number]['result'],
    error: (t.error ?? null) as string | null,
    startedAt: iso(t.startedAt) as string,
    finishedAt: iso(t.finishedAt),
  }));
  const waitpoints = (r.waitpoints as Record<string, unknown>[]).map((w) => ({
    id: w.id as string,
    type: 'PLAN_APPROVAL' as const,
    status: w.status as RunSnapshot['waitpoints'][number]['status'],
    plan: w.plan as RunSnapshot['waitpoints'][number]['plan'],
    feedback: (w.feedback ?? null) as string | null,
    createdAt: iso(w.createdAt) as string,
    resolvedAt: iso(w.resolvedAt),
  }));
  return {
    id: r.id as string,
    chatId: r.chatId as string,
    messageId: r.messageId as string,
    assistantMessageId: r.assistantMessageId as string,
    status: r.status as RunSnapshot['status'],
    planMode: r.planMode as boolean,
    triggerRunId: (r.triggerRunId ?? null) as string | null,
    text: r.text as string,
    currentStep: r.currentStep as number,
    toolCalls,
    waitpoints,
    error: (r.error ?? null) as string | null,
    createdAt: iso(r.createdAt) as string,
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    updatedAt: iso(r.updatedAt) as string,
  };
}
