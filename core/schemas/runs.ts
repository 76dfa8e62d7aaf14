import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  exampleActiveRun,
  exampleCompletionForm,
  exampleCompletionRequest,
  exampleQueuedTurn,
  exampleRegenerateRequest,
  exampleRunSnapshot,
  exampleRunSummary,
  exampleRunWebhook,
  exampleWaitpoint,
  exampleWaitpointDecision,
} from './examples';
import { MAX_FILES } from '../uploads/receive';
import {
  cursorQuery,
  limitQuery,
  listSchema,
  nullableRef,
  stored,
  TRANSPORTS,
  type Transport,
} from './common';
import { toolResultSchema, WEBHOOK_EVENTS } from './events';
import { canonicalHash } from '../hashing/canonical';
import { runSettingsSchema, runUsageSchema, sendSettingsShape, stepUsageSchema, EMPTY_USAGE } from './agent';
import { runMetadataSchema, type RunMetadata } from './metadata';

export { runMetadataSchema, type RunMetadata };

extendZodWithOpenApi(z);

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING', 'COMPLETE', 'FAILED', 'CANCELLED'] as const;

/** What a send does when its chat already has a run not yet terminal (extension). */
export const ON_ACTIVE_RUN = ['reject', 'enqueue', 'interrupt'] as const;
export type OnActiveRun = (typeof ON_ACTIVE_RUN)[number];
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
  steps: z.array(
    z.object({
      toolName: z.string(),
      input: z.unknown(),
      reason: z.string(),
      credits: z.string().optional().openapi({
        'x-extension': true,
        description: 'What the step costs when it succeeds, in credits (the tool’s price), a decimal string.',
      }),
    }),
  ),
  totalCredits: z.string().optional().openapi({
    'x-extension': true,
    description:
      "What the plan's steps cost together, in credits; the model steps after it are charged by their tokens.",
  }),
});
export type Plan = z.infer<typeof planSchema>;

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(v as string).toISOString();

const planHashSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be the planHash the waitpoint shows: 64 lower-case hex digits')
  .openapi({
    description:
      'SHA-256 (hex) of the plan as served, in canonical JSON (object keys sorted, no spaces), as the waitpoint shows it.',
    example: '9f2c4b1e0d7a6c5b4a3928170f6e5d4c3b2a19087f6e5d4c3b2a190807f6e5d4',
  });

export const waitpointSchema = z
  .object({
    id: z.uuid(),
    type: z.literal('PLAN_APPROVAL'),
    status: z.enum(['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'CANCELLED']),
    plan: planSchema,
    planHash: planHashSchema,
    feedback: z.string().nullable(),
    createdAt: z.iso.datetime(),
    resolvedAt: z.iso.datetime().nullable(),
    decidedBy: z
      .object({
        userId: z.uuid(),
        apiKeyId: z.uuid().nullable().openapi({ description: 'The API key the decision came with.' }),
        sessionId: z
          .uuid()
          .nullable()
          .openapi({ description: 'The signed-in session it came with (the console).' }),
        via: z.enum(TRANSPORTS).openapi({ description: 'The transport the decision came by.' }),
      })
      .nullable()
      .openapi({
        description:
          'Who approved or rejected the plan; null while pending, and for an expired or cancelled plan.',
      }),
    decidedAt: z.iso.datetime().nullable(),
  })
  .openapi('Waitpoint', { example: exampleWaitpoint });

/** The plan's stable name: a decision carrying it is refused when the pending plan is another. */
export function planHashOf(plan: unknown): string {
  return canonicalHash(plan);
}

/**
 * A waitpoint's plan never changes, so its hash is worked out once per waitpoint, not on every
 * poll of a run waiting for approval (the canonical JSON and its SHA-256 were a poll's largest
 * cost). The oldest is forgotten past this many.
 */
const PLAN_HASHES_KEPT = 1_000;
const planHashes = new Map<string, string>();

function waitpointPlanHash(waitpointId: string, plan: unknown): string {
  const known = planHashes.get(waitpointId);
  if (known !== undefined) return known;
  const hash = planHashOf(plan);
  if (planHashes.size >= PLAN_HASHES_KEPT) planHashes.delete(planHashes.keys().next().value as string);
  planHashes.set(waitpointId, hash);
  return hash;
}

export type WaitpointDto = z.infer<typeof waitpointSchema>;

/** A Waitpoint row (or its JSON, dates as text) as the API shows it. */
export function toWaitpointDto(row: {
  id: string;
  status: WaitpointDto['status'];
  plan: unknown;
  feedback: string | null;
  createdAt: Date | string;
  resolvedAt: Date | string | null;
  decidedByUserId: string | null;
  decidedByApiKeyId: string | null;
  decidedBySessionId: string | null;
  decidedVia: string | null;
  decidedAt: Date | string | null;
}): WaitpointDto {
  return {
    id: row.id,
    type: 'PLAN_APPROVAL',
    status: row.status,
    plan: row.plan as Plan,
    planHash: waitpointPlanHash(row.id, row.plan),
    feedback: row.feedback ?? null,
    createdAt: iso(row.createdAt) as string,
    resolvedAt: iso(row.resolvedAt),
    decidedBy: row.decidedByUserId
      ? {
          userId: row.decidedByUserId,
          apiKeyId: row.decidedByApiKeyId ?? null,
          sessionId: row.decidedBySessionId ?? null,
          via: (row.decidedVia ?? 'rest') as Transport,
        }
      : null,
    decidedAt: iso(row.decidedAt),
  };
}

export const runWebhookSchema = z
  .object({
    deliveryId: z
      .uuid()
      .openapi({ description: 'Its attempt log: GET /api/webhook-endpoints/{endpointId}/deliveries.' }),
    event: z.enum(WEBHOOK_EVENTS),
    envelopeId: z.string().openapi({ description: 'The envelope id the receiver sees.' }),
    endpointId: z.uuid(),
    toolCallId: z
      .uuid()
      .nullable()
      .openapi({ description: 'For tool.completed: the tool call it announces.' }),
    status: z.enum(['PENDING', 'DELIVERED', 'FAILED']),
    attempts: z.number().int().openapi({ description: 'Attempts made so far, over every redelivery.' }),
    lastAttemptAt: z.iso.datetime().nullable(),
    lastStatusCode: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's status on the last attempt; null when it did not answer." }),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .openapi('RunWebhookDelivery', { example: exampleRunWebhook });

const ACTIVE_RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING'] as const;

/** The run a 409 RUN_ACTIVE names, so the client can follow it instead of guessing. */
export const activeRunSchema = z
  .object({
    id: z.uuid(),
    chatId: z.uuid(),
    status: z.enum(ACTIVE_RUN_STATUSES),
    waitpoint: nullableRef(waitpointSchema).openapi({
      description: 'The plan waiting for approval, if any.',
    }),
    links: z.object({
      poll: z.string().openapi({ description: 'GET: the run snapshot.' }),
      stream: z.string().openapi({ description: 'GET: the run as Server-Sent Events.' }),
      cancel: z.string().openapi({ description: 'POST: cancel the run.' }),
      decide: z
        .string()
        .nullable()
        .openapi({ description: 'POST: approve or reject the open waitpoint; null when none is open.' }),
    }),
  })
  .openapi('ActiveRun', {
    example: exampleActiveRun,
    description: "The chat's active run (on 409 RUN_ACTIVE); paths are relative to the service's base URL.",
  });
export type ActiveRun = z.infer<typeof activeRunSchema>;

/** A chat's active run as a 409 RUN_ACTIVE shows it, with where to follow it. */
export function toActiveRun(
  chatId: string,
  run: { id: string; status: ActiveRun['status']; waitpoint: Parameters<typeof toWaitpointDto>[0] | null },
): ActiveRun {
  const base = `/api/v1/chats/${chatId}/runs/${run.id}`;
  return {
    id: run.id,
    chatId,
    status: run.status,
    waitpoint: run.waitpoint ? toWaitpointDto(run.waitpoint) : null,
    links: {
      poll: base,
      stream: `${base}/events`,
      cancel: `${base}/cancel`,
      decide: run.waitpoint ? `${base}/waitpoints/${run.waitpoint.id}/complete` : null,
    },
  };
}

/** A tool call of a run, as the snapshot and the stream's `tool.*` events show it. */
const toolCallSchema = z
  .object({
    id: z.uuid(),
    toolName: z.string(),
    status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED']),
    input: z.unknown(),
    result: nullableRef(toolResultSchema),
    error: z.string().nullable(),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .openapi('ToolCall');

/** Why a run is not moving (extension): see docs/runs.md, "Why a run is not moving". */
export const waitingForSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('plan_approval'),
      waitpointId: z.uuid(),
      expiresAt: z.iso.datetime(),
    }),
    z.object({
      kind: z.literal('queue'),
      position: z.number().int().min(1).openapi({ description: "Its place in the chat's queue; 1 is next." }),
    }),
    z.object({
      kind: z.literal('provider_retry'),
      reason: z.enum(['rate_limited', 'provider_error']).openapi({
        description:
          'rate_limited: the provider answered 429 (its retry-after is waited out); provider_error: a 5xx, a timeout or a cut stream.',
      }),
      attempt: z.number().int().min(2).openapi({ description: "The model step's next attempt." }),
      maxAttempts: z.number().int().min(2),
      retryAt: z.iso.datetime().openapi({ description: 'When the next attempt starts.' }),
    }),
    z.object({
      kind: z.literal('tool_slot'),
      toolName: z.string(),
      attempt: z.number().int().min(2).openapi({
        description: "The tool call's next try for one of the user's MAX_ACTIVE_TOOL_CALLS_PER_USER slots.",
      }),
      maxAttempts: z.number().int().min(2),
      retryAt: z.iso.datetime(),
    }),
  ])
  .nullable()
  .openapi('WaitingFor', {
    description:
      "What the run waits for while it is not moving (extension): its plan's decision, a model provider's retry (a rate limit or an error), a slot among the user's running tool calls, or its place in the chat's queue. Null otherwise, and once it has ended or its cancel is recorded.",
    'x-extension': true,
  });
export type WaitingFor = z.infer<typeof waitingForSchema>;

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
    activity: z.string().nullable().openapi({
      description:
        'What a live run is doing now, from its workflow ("model step 2", "waiting for plan approval", a tool\'s name); at most a second old; null before it starts and once it ends.',
    }),
    toolCalls: z.array(toolCallSchema),
    waitpoints: z.array(waitpointSchema),
    settings: nullableRef(runSettingsSchema).openapi({
      description: 'What the run used; null for a run admitted before settings existed.',
    }),
    usage: runUsageSchema,
    stepUsage: z.array(stepUsageSchema).openapi({
      'x-extension': true,
      description: "The run's usage per model step, oldest first (a step's compaction included).",
    }),
    webhooks: z.array(runWebhookSchema).openapi({
      description:
        "The run's webhook ledger: each event of the run (its agent events and its tool calls' tool.completed) to each of the user's endpoints subscribed to it, with the delivery's status and attempt count. Empty when the user has no endpoint for them.",
    }),
    waitingFor: waitingForSchema,
    error: z.string().nullable(),
    cancelRequestedAt: z.iso.datetime().nullable().openapi({
      description:
        'When a cancel of the run was recorded (extension): from then on the run ends CANCELLED, whatever it was doing, and a plan still pending reads CANCELLED. Its status stays what it was until the run has stopped; wait for CANCELLED. Null when no cancel was asked for.',
      'x-extension': true,
    }),
    metadata: runMetadataSchema,
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('RunSnapshot', { example: exampleRunSnapshot });
export type RunSnapshot = z.infer<typeof runSnapshotSchema>;

export const streamHeadersSchema = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, 'must be the id of an event of this stream')
    .transform(Number)
    .optional()
    .openapi({ description: 'Resume after this event: what follows it, without the snapshot.' }),
});

/**
 * One event of a run's stream, as Server-Sent Events frame it (`id:`, `event:`, `data:` lines):
 * under OpenAPI 3.1 a `text/event-stream` schema describes each event, and its `data` is JSON of
 * the shape its name gives (`contentSchema`), so a client generator and the fuzzer both check
 * every event. Migration run_events writes the `text.delta` and `status` events.
 */
const streamEvent = (names: [string, ...string[]], data: object, description: string) =>
  z.object({
    id: z
      .string()
      .regex(/^[0-9]+$/)
      .openapi({ description: 'Increasing; give the last one seen as `Last-Event-ID` to resume.' }),
    event: z.enum(names),
    data: z
      .string()
      .openapi({ description, contentMediaType: 'application/json', contentSchema: data } as object),
  });
const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonSchemaOf = (schema: z.ZodType) => {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12' });
  return json;
};

/** Written by migration chat_events when a turn is queued behind its chat's head. */
const queuedEventSchema = z.strictObject({
  status: z.literal('QUEUED'),
  messageId: z.uuid(),
  metadata: z.record(z.string(), z.string()),
  position: z.number().int().min(1),
});
const QUEUED_EVENT_DESCRIPTION =
  "The turn was queued behind its chat's active run (onActiveRun enqueue or interrupt), at this place.";

/** A run's own events (migrations run_events and chat_events): names, data schema, description. */
const RUN_EVENTS: [[string, ...string[]], object, string][] = [
  [
    ['text.delta'],
    jsonSchemaOf(z.strictObject({ text: z.string(), replace: z.literal(true).optional() })),
    'Text appended to the answer; with `replace: true`, the whole text, replacing it.',
  ],
  [['tool.started', 'tool.finished'], componentRef('ToolCall'), 'The tool call.'],
  [['waitpoint.opened', 'waitpoint.resolved'], componentRef('Waitpoint'), 'The plan waitpoint.'],
  [
    ['status'],
    jsonSchemaOf(z.strictObject({ status: z.enum(RUN_STATUSES), error: z.string().optional() })),
    "The run's new status (RUNNING: it started), with its error when it failed.",
  ],
  [['queued'], jsonSchemaOf(queuedEventSchema), QUEUED_EVENT_DESCRIPTION],
  [
    ['waiting'],
    {
      type: 'object',
      properties: { waitingFor: componentRef('WaitingFor') },
      required: ['waitingFor'],
      additionalProperties: false,
    },
    "The running run began waiting (a provider's retry, a tool-call slot), or moves again (null).",
  ],
];
const [firstRunEvent, ...moreRunEvents] = RUN_EVENTS.map(([names, data, description]) =>
  streamEvent(names, data, description),
);

export const runStreamEventSchema = z
  .discriminatedUnion('event', [
    streamEvent(
      ['snapshot'],
      componentRef('RunSnapshot'),
      'The run as a poll shows it; first, unless resuming.',
    ),
    firstRunEvent!,
    ...moreRunEvents,
  ])
  .openapi('RunStreamEvent', {
    description:
      'An event of the stream. A `: ping` comment comes every 15 s; the stream ends after the terminal status.',
    example: { id: '4', event: 'text.delta', data: '{"text":"Hel"}' },
  });

export const chatSnapshotSchema = z
  .object({
    chatId: z.uuid(),
    runs: z
      .array(runSnapshotSchema)
      .openapi({ description: "The chat's unfinished runs: its active run first, then its queue in order." }),
  })
  .openapi('ChatSnapshot');

/** A chat stream event's data: the run it is of, and the event as the run's own stream sends it. */
const chatEvents = RUN_EVENTS.map(([names, data, description]) =>
  streamEvent(
    names,
    {
      type: 'object',
      properties: { runId: { type: 'string', format: 'uuid' }, data },
      required: ['runId', 'data'],
      additionalProperties: false,
    },
    `Of the run \`runId\`: ${description}`,
  ),
);

export const chatStreamEventSchema = z
  .discriminatedUnion('event', [
    streamEvent(
      ['snapshot'],
      componentRef('ChatSnapshot'),
      "The chat's unfinished runs; first, unless resuming, and again when a resume cannot go on without a gap.",
    ),
    ...chatEvents,
  ])
  .openapi('ChatStreamEvent', {
    description:
      "An event of the chat's stream: each names its run (`runId`) and carries what the run's own stream sends. A `: ping` comment comes every 15 s; the stream goes on until the client leaves or the chat is deleted.",
    example: {
      id: '41',
      event: 'text.delta',
      data: '{"runId":"6f1c2b9e-3a0d-4e59-9a55-0f4f2a8b7c10","data":{"text":"Hel"}}',
    },
  });

// Requests of the runs routes (and the MCP tools that do the same).
export const MAX_TEXT = 8192;
const MAX_IMAGE_URLS = 8;
/** Every URL is kept in the message and shown back: no room for a payload smuggled in one. */
const MAX_URL_LENGTH = 2048;
const MAX_FEEDBACK = 2000;

const onActiveRunSchema = z.enum(ON_ACTIVE_RUN).default('reject').openapi({
  description:
    "What the send does when the chat already has a run not yet finished (extension): `reject` answers 409 RUN_ACTIVE; `enqueue` queues the turn behind it (202 with its `queuePosition`; 409 QUEUE_FULL past the chat's cap); `interrupt` cancels the chat's run (as a cancel would) and this turn runs next, ahead of any turn already queued (202 with `queuePosition` 1 and `interruptedRunIds`; on a chat with no run, a plain send).",
  'x-extension': true,
});

export const completionBodySchema = z
  .object({
    text: stored(z.string().min(1).max(MAX_TEXT)),
    chatId: z.uuid().optional(),
    image_urls: z
      .array(stored(z.url({ protocol: /^https?$/ }).max(MAX_URL_LENGTH)))
      .max(MAX_IMAGE_URLS)
      .default([]),
    attachmentIds: z.array(z.uuid()).max(MAX_IMAGE_URLS).default([]),
    planMode: z.boolean().default(false),
    ...sendSettingsShape,
    metadata: runMetadataSchema.default({}),
    onActiveRun: onActiveRunSchema,
  })
  .strict()
  .openapi('CompletionRequest', { example: exampleCompletionRequest });

/** A form's `metadata`: the same object, as JSON text (a form field is a string). */
const metadataFormField = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of string values' });
      return z.NEVER;
    }
  })
  .pipe(runMetadataSchema)
  .default({})
  .openapi({
    type: 'string',
    description: `The run's metadata as JSON text, e.g. {"customer":"acme"} (extension): as metadata in the JSON body.`,
    'x-extension': true,
  });

export const completionFormSchema = z
  .object({
    text: stored(z.string().min(1).max(MAX_TEXT)),
    chatId: z.uuid().optional(),
    planMode: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    onActiveRun: onActiveRunSchema,
    file: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional()
      .openapi({ description: `repeat for several files; ${MAX_FILES} files in all` }),
    files: z
      .array(z.string().openapi({ format: 'binary' }))
      .max(MAX_FILES)
      .optional(),
    metadata: metadataFormField,
  })
  .strict()
  .openapi('CompletionForm', { example: exampleCompletionForm });

export const runParamsSchema = z.object({ chatId: z.uuid(), runId: z.uuid() });
export const waitpointParamsSchema = runParamsSchema.extend({ waitpointId: z.uuid() });

export const planDecisionSchema = z
  .object({
    approved: z.boolean(),
    feedback: stored(z.string().max(MAX_FEEDBACK)).optional(),
    planHash: planHashSchema.optional().openapi({
      description:
        "The waitpoint's planHash as the decider saw it: when the plan pending is another, the decision is refused with 409 PLAN_CHANGED.",
    }),
  })
  .strict()
  .openapi('WaitpointDecision', { example: exampleWaitpointDecision });
export type PlanDecisionInput = z.output<typeof planDecisionSchema>;

export type CompletionInput = z.output<typeof completionBodySchema>;
export type CompletionFormInput = z.output<typeof completionFormSchema>;

/** A send's (or a regenerate's) settings and budget, as the runs operation takes them (REST and MCP alike). */
export function sendSettingsOf(body: Pick<CompletionInput, keyof typeof sendSettingsShape>) {
  const { model, instructions, maxSteps, tools, budget } = body;
  return {
    settings: {
      ...(model === undefined ? {} : { model }),
      ...(instructions === undefined ? {} : { instructions }),
      ...(maxSteps === undefined ? {} : { maxSteps }),
      ...(tools === undefined ? {} : { tools }),
    },
    ...(budget === undefined ? {} : { budget }),
  };
}
/** The body of a regenerate: what a send may say of its run (settings and budget too), for the new one. */
export const regenerateBodySchema = z
  .object({
    planMode: z.boolean().default(false),
    ...sendSettingsShape,
    metadata: runMetadataSchema.default({}),
  })
  .strict()
  .openapi('RegenerateRequest', { example: exampleRegenerateRequest });
export type RegenerateInput = z.output<typeof regenerateBodySchema>;

export const messageParamsSchema = z.object({ chatId: z.uuid(), messageId: z.uuid() });

/** The runs lists' `status` filter: one status, or several separated by commas. */
const STATUS_LIST = new RegExp(`^(${RUN_STATUSES.join('|')})(,(${RUN_STATUSES.join('|')}))*$`);

/** `since` and `until`: any ISO 8601 date-time with its offset (or `Z`). */
const instantQuery = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .optional()
    .openapi({ type: 'string', format: 'date-time', description });

/**
 * The runs lists' query (GET /api/v1/runs, GET /api/v1/chats/{chatId}/runs, MCP list_runs). Its
 * `metadata` is `metadata[<key>]=<value>` in a query string (see deepObjectQuery, apps/gateway/http/parse.ts).
 */
export const runListQueryFields = {
  limit: limitQuery(50, 20),
  cursor: cursorQuery,
  status: z
    .string()
    .regex(STATUS_LIST, `must be one or more of ${RUN_STATUSES.join(', ')}, separated by commas`)
    .transform((list) => [...new Set(list.split(','))] as RunStatus[])
    .optional()
    .openapi({
      type: 'string',
      pattern: STATUS_LIST.source,
      description: `Only runs in this status, or in any of several separated by commas (QUEUED,RUNNING,WAITING: the active ones). One of ${RUN_STATUSES.join(', ')}.`,
      example: 'COMPLETE',
    }),
  since: instantQuery('Only runs created at or after this instant.'),
  until: instantQuery('Only runs created before this instant; not before `since`.'),
  metadata: runMetadataSchema.optional().openapi({
    description:
      'Only runs carrying every one of these pairs: `metadata[customer]=acme&metadata[ticket]=T-1042`.',
    param: { style: 'deepObject', explode: true },
  }),
};

/** `until` is not before `since`: said of the field `until`. */
export const untilNotBeforeSince: [
  (q: { since?: Date; until?: Date }) => boolean,
  { path: string[]; message: string },
] = [
  (q) => !q.since || !q.until || q.since <= q.until,
  { path: ['until'], message: 'must not be before since' },
];

export const runListQuerySchema = z.object(runListQueryFields).refine(...untilNotBeforeSince);
export type RunListQuery = z.output<typeof runListQuerySchema>;

/** A run as the runs lists show it: the snapshot's fields but its text, tool calls, waitpoints and webhooks. */
export const runSummarySchema = z
  .object({
    id: z.uuid(),
    chatId: z.uuid(),
    messageId: z
      .uuid()
      .openapi({ description: 'The user message it answers (the same for a regenerated answer).' }),
    assistantMessageId: z.uuid(),
    status: z.enum(RUN_STATUSES),
    planMode: z.boolean(),
    triggerRunId: z.string().nullable(),
    metadata: runMetadataSchema,
    error: z.string().nullable(),
    cancelRequestedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .openapi('RunSummary', { example: exampleRunSummary });
export type RunSummary = z.output<typeof runSummarySchema>;

export const runListSchema = listSchema(runSummarySchema, 'RunList', exampleRunSummary);

export const queuedTurnSchema = z
  .object({
    chatId: z.uuid(),
    messageId: z.uuid(),
    runId: z.uuid(),
    triggerRunId: z.string().nullable(),
    status: z.literal('queued'),
    queuePosition: z.number().int().min(1).nullable().openapi({
      description:
        "The turn's place in the chat's queue (extension; 1 is next): it starts when the runs before it have ended. Null when it is the chat's run now.",
      'x-extension': true,
    }),
    interruptedRunIds: z.array(z.uuid()).optional().openapi({
      description:
        'With `onActiveRun: "interrupt"`: the run this turn cancelled, the chat\'s active run; empty when the chat had none (extension). It ends CANCELLED with its agent.failed, as any cancelled run.',
      'x-extension': true,
    }),
  })
  .openapi('QueuedTurn', { example: exampleQueuedTurn });

/** A tool call of a run, from its row as JSON (the snapshot's statement, a stream event). */
export function toToolCallDto(t: Record<string, unknown>): RunSnapshot['toolCalls'][number] {
  return {
    id: t.id as string,
    toolName: t.toolName as string,
    status: t.status as RunSnapshot['toolCalls'][number]['status'],
    input: t.input,
    result: (t.result ?? null) as RunSnapshot['toolCalls'][number]['result'],
    error: (t.error ?? null) as string | null,
    startedAt: iso(t.startedAt) as string,
    finishedAt: iso(t.finishedAt),
  };
}

/**
 * A recorded cancel has decided a pending plan: it can no longer be approved (a decision answers
 * RUN_NOT_ACTIVE), so it reads CANCELLED from the cancel's time on, as it ends.
 */
function cancelledPlan(waitpoint: WaitpointDto, cancelRequestedAt: string | null): WaitpointDto {
  if (cancelRequestedAt === null || waitpoint.status !== 'PENDING') return waitpoint;
  return { ...waitpoint, status: 'CANCELLED', resolvedAt: cancelRequestedAt };
}

export function toRunSnapshot(r: Record<string, unknown>): RunSnapshot {
  const toolCalls = (r.toolCalls as Record<string, unknown>[]).map(toToolCallDto);
  const cancelRequestedAt = iso(r.cancelRequestedAt);
  const waitpoints = (r.waitpoints as Parameters<typeof toWaitpointDto>[0][]).map((w) =>
    cancelledPlan(toWaitpointDto(w), cancelRequestedAt),
  );
  return {
    ...toRunSummary(r),
    text: r.text as string,
    currentStep: r.currentStep as number,
    activity: null,
    toolCalls,
    waitpoints,
    settings: toRunSettings(r.settings, r.budget),
    usage: toRunUsage(r.usage),
    stepUsage: ((r.stepUsage as RunSnapshot['stepUsage'] | undefined) ?? []).map((s) => ({
      step: s.step,
      model: s.model,
      inputTokens: s.inputTokens,
      outputTokens: s.outputTokens,
      cachedInputTokens: s.cachedInputTokens,
      credits: s.credits,
      compacted: s.compacted,
    })),
    waitingFor: (r.waitingFor ?? null) as WaitingFor,
    webhooks: (r.webhooks as Record<string, unknown>[]).map((d) => ({
      deliveryId: d.deliveryId as string,
      event: d.event as RunSnapshot['webhooks'][number]['event'],
      envelopeId: d.envelopeId as string,
      endpointId: d.endpointId as string,
      toolCallId: (d.toolCallId ?? null) as string | null,
      status: d.status as RunSnapshot['webhooks'][number]['status'],
      attempts: d.attempts as number,
      lastAttemptAt: iso(d.lastAttemptAt),
      lastStatusCode: (d.lastStatusCode ?? null) as number | null,
      deliveredAt: iso(d.deliveredAt),
    })),
    cancelRequestedAt,
  };
}

/** A run's row as the runs lists show it. */
export function toRunSummary(r: Record<string, unknown>): RunSummary {
  return {
    id: r.id as string,
    chatId: r.chatId as string,
    messageId: r.messageId as string,
    assistantMessageId: r.assistantMessageId as string,
    status: r.status as RunSummary['status'],
    planMode: r.planMode as boolean,
    triggerRunId: (r.triggerRunId ?? null) as string | null,
    metadata: (r.metadata ?? {}) as RunMetadata,
    error: (r.error ?? null) as string | null,
    cancelRequestedAt: iso(r.cancelRequestedAt),
    createdAt: iso(r.createdAt) as string,
    startedAt: iso(r.startedAt),
    finishedAt: iso(r.finishedAt),
    updatedAt: iso(r.updatedAt) as string,
  };
}

/** A run's stored settings and budget as its snapshot shows them. */
function toRunSettings(settings: unknown, budget: unknown): RunSnapshot['settings'] {
  if (!settings) return null;
  const s = settings as Omit<NonNullable<RunSnapshot['settings']>, 'budget'>;
  const b = budget as { maxCredits?: string; maxToolCalls?: number } | null;
  return {
    model: s.model,
    instructions: s.instructions,
    maxSteps: s.maxSteps,
    tools: s.tools,
    budget: b ? { maxCredits: b.maxCredits ?? null, maxToolCalls: b.maxToolCalls ?? null } : null,
  };
}

/** A run's usage, as its statement built it, in the document's order. */
function toRunUsage(usage: unknown): RunSnapshot['usage'] {
  const u = (usage as RunSnapshot['usage'] | undefined) ?? EMPTY_USAGE;
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    cachedInputTokens: u.cachedInputTokens,
    steps: u.steps,
    credits: u.credits,
    compacted: u.compacted,
  };
}
