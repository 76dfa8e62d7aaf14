import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { OAuthScope } from '../../core/auth/scopes';
import type { Config } from '../../core/config/config';
import { ValidationError } from '../../core/errors/app-error';
import { chatListQuerySchema, chatListSchema, messageListSchema } from '../../core/schemas/chats';
import { toolResultSchema, type ToolResult } from '../../core/schemas/events';
import { errorEnvelopeSchema } from '../../core/schemas/errors';
import { idempotencyKeySchema } from '../../core/schemas/idempotency';
import {
  decidePlanInputSchema,
  followChatInputSchema,
  followChatOutputSchema,
  getMessagesInputSchema,
  listRunsInputSchema,
  runIdsInputSchema,
  waitForRunInputSchema,
} from '../../core/schemas/mcp';
import {
  completionBodySchema,
  queuedTurnSchema,
  runListSchema,
  runSnapshotSchema,
  TERMINAL_RUN_STATUSES,
  waitpointSchema,
  type RunSnapshot,
} from '../../core/schemas/runs';
import { TOOL_NAMES, TOOLS, type ToolName } from '../../core/tools/registry';
import type { Caller, Operations } from '../../operations';
import { turnInput } from '../../operations/runs';

/** What a tool call runs with: the caller's operations, and a way to tell the client how it goes. */
export interface ToolContext {
  ops: Operations;
  caller: Caller;
  config: Config;
  /** A `notifications/progress` to the client, when it asked for progress; else nothing. */
  progress(message: string): Promise<void>;
  /** Aborted when the client cancels the request or goes away. */
  signal: AbortSignal;
  /** The call's `idempotencyKey` argument, for a tool that takes one. */
  idempotencyKey?: string;
}

type ContentBlock = CallToolResult['content'][number];

interface McpTool<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  title: string;
  /** For a model: what it does, when to use it, what it returns. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** What an OAuth access token needs to call it: `read` for reading, `write` for all else. */
  scope: OAuthScope;
  /**
   * Takes an optional `idempotencyKey` argument: a retry with the same key gets the first call's
   * answer and does nothing again (the operation's Idempotency-Key, as on REST).
   */
  idempotent?: true;
  /**
   * Validates the arguments. The media tools leave it to their operation, whose one parser also
   * tells a bad crop rectangle (INVALID_RECTANGLE) from any other bad input.
   */
  validate?: false;
  /**
   * Answers only when the run settles or the work is done, up to minutes later: its answer comes on
   * an event stream even without progress, whose keep-alives hold the connection open through
   * proxies meanwhile.
   */
  waits?: true;
  run(ctx: ToolContext, input: z.output<I>): Promise<{ result: z.output<O>; content?: ContentBlock[] }>;
}

const define = <I extends z.ZodType, O extends z.ZodType>(tool: McpTool<I, O>): McpTool => tool as McpTool;

/** How often a blocking media tool tells the client it is still working. */
const TOOL_PROGRESS_MS = 2_000;

/**
 * Nothing more happens without the caller: the run ended, or a plan waits for its decision. A run
 * whose cancel is recorded is on its way to CANCELLED: not settled until it gets there.
 */
export const isSettled = (s: RunSnapshot) =>
  (TERMINAL_RUN_STATUSES as readonly string[]).includes(s.status) ||
  (s.cancelRequestedAt === null &&
    s.status === 'WAITING' &&
    s.waitpoints.some((w) => w.status === 'PENDING'));

function mediaTool(name: ToolName) {
  return define({
    title: name,
    description:
      `${TOOLS[name].description} Blocks until the result is ready (up to 5 minutes), sending progress ` +
      'notifications meanwhile, and charges credits as the REST route does. Returns the result file as a ' +
      'resource_link (an image also inline when it is small), and in structuredContent the ToolResult: ' +
      'output.url, assets, creditCost. Give an idempotencyKey to retry safely: a retry with the same key ' +
      'gets the first result and is not charged again.',
    input: TOOLS[name].input,
    output: toolResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    scope: 'write',
    idempotent: true,
    validate: false,
    waits: true,
    async run(ctx, input) {
      const started = Date.now();
      await ctx.progress(`${name} started`);
      const ticker = setInterval(() => {
        const seconds = Math.round((Date.now() - started) / 1000);
        void ctx.progress(`${name} running (${seconds} s)`).catch(() => undefined);
      }, TOOL_PROGRESS_MS);
      let result: ToolResult;
      try {
        result = (await ctx.ops.tools.callTool(ctx.caller, { name, input }, ctx.idempotencyKey)).value;
      } finally {
        clearInterval(ticker);
      }
      const asset = result.assets[0];
      const image = await ctx.ops.files.inlineImage(result.output.url, ctx.config.MCP_INLINE_IMAGE_MAX_BYTES);
      return {
        result,
        content: [
          {
            type: 'resource_link',
            uri: result.output.url,
            name: asset?.filename ?? `${name} result`,
            ...(asset ? { mimeType: asset.mimeType } : {}),
          },
          ...(image ? [{ type: 'image' as const, ...image }] : []),
        ],
      };
    },
  });
}

/** The MCP tools: each calls the one operation its REST route calls. */
export const MCP_TOOLS: Record<string, McpTool> = {
  send_message: define({
    title: 'Send a message',
    description:
      'Sends a user message to the agent and queues a run that answers it. Leave chatId out to start a new ' +
      'chat; give it to continue one. planMode: true makes the agent propose a plan and wait for decide_plan ' +
      'before it uses any tool. A chat runs one turn at a time: while its run is active this fails with ' +
      'RUN_ACTIVE, unless onActiveRun says otherwise: "enqueue" queues the turn behind it (queuePosition; ' +
      'QUEUE_FULL past the chat\'s cap), "interrupt" cancels the active run and this turn runs next. ' +
      'Returns chatId and runId at once (status "queued"); follow the run with wait_for_run. ' +
      'Give an idempotencyKey to retry safely: a retry with the same key gets the first answer and sends nothing.',
    input: completionBodySchema,
    output: queuedTurnSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    scope: 'write',
    idempotent: true,
    run: async (ctx, input) => ({
      result: (await ctx.ops.runs.sendTurn(ctx.caller, turnInput(input), ctx.idempotencyKey)).value,
    }),
  }),

  get_run: define({
    title: 'Get a run',
    description:
      'Reads a run as it stands now: status (QUEUED, RUNNING, WAITING, COMPLETE, FAILED, CANCELLED), the ' +
      'assistant text so far, tool calls, plan waitpoints and error. Use wait_for_run instead to follow a run.',
    input: runIdsInputSchema,
    output: runSnapshotSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    run: async (ctx, input) => ({ result: await ctx.ops.runs.getRun(ctx.caller, input) }),
  }),

  wait_for_run: define({
    title: 'Wait for a run',
    description:
      'Waits until the run has finished (COMPLETE, FAILED, CANCELLED) or waits for plan approval (WAITING), ' +
      'for at most timeoutSeconds, sending the assistant text as it grows in progress notifications. Returns ' +
      'the run snapshot; if it has not finished (RUNNING, or cancelRequestedAt set: a cancelled run still ' +
      'stopping), call wait_for_run again. When WAITING with a PENDING plan, read it in waitpoints and answer ' +
      'it with decide_plan.',
    input: waitForRunInputSchema,
    output: runSnapshotSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    waits: true,
    async run(ctx, { timeoutSeconds, ...ids }) {
      const waited = AbortSignal.timeout(Math.min(timeoutSeconds * 1000, ctx.config.MCP_WAIT_MAX));
      let told = '';
      // The watch reads the run once before anything can end it.
      let last!: RunSnapshot;
      for await (const snapshot of ctx.ops.runs.watchRun(
        ctx.caller,
        ids,
        AbortSignal.any([ctx.signal, waited]),
      )) {
        last = snapshot;
        if (snapshot.text !== told) {
          told = snapshot.text;
          await ctx.progress(snapshot.text);
        }
        if (isSettled(snapshot)) break;
      }
      return { result: last };
    },
  }),

  follow_chat: define({
    title: 'Follow a chat',
    description:
      "Follows a chat's runs, as several tabs of a chat app would: without after, the chat as it stands (a " +
      "'snapshot' event: its unfinished runs, the active one first, then its queue); then every event of any " +
      "of its runs, in order: 'queued' (a turn waits behind the active run), 'status' (RUNNING: a run started; " +
      "WAITING, COMPLETE, FAILED, CANCELLED), 'text.delta', 'tool.started', 'tool.finished', 'waitpoint.opened', " +
      "'waitpoint.resolved', each with its runId. Waits up to timeoutSeconds for the first event, then returns " +
      'every event it has (none if none came). Call again with after: lastEventId to go on without a gap or a repeat.',
    input: followChatInputSchema,
    output: followChatOutputSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    waits: true,
    async run(ctx, { chatId, after, timeoutSeconds }) {
      const waited = AbortSignal.timeout(Math.min(timeoutSeconds * 1000, ctx.config.MCP_WAIT_MAX));
      const signal = AbortSignal.any([ctx.signal, waited]);
      const events = await ctx.ops.runs.followChat(ctx.caller, chatId, { after, signal });
      return {
        result: {
          events: events.map((e) =>
            e.event === 'snapshot'
              ? { id: e.id, event: e.event, data: e.data }
              : { id: e.id, event: e.event, ...(e.data as { runId: string; data: unknown }) },
          ),
          lastEventId: events.at(-1)?.id ?? after ?? 0,
        },
      };
    },
  }),

  list_chats: define({
    title: 'List chats',
    description:
      'Lists your chats, most recent activity first, one page at a time (pass nextCursor as cursor for the ' +
      'next). q searches titles (case-insensitive); favorite "true" or "false" filters. Returns { data, nextCursor }.',
    input: chatListQuerySchema,
    output: chatListSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    run: async (ctx, input) => ({ result: await ctx.ops.chats.listChats(ctx.caller, input) }),
  }),

  list_runs: define({
    title: 'List runs',
    description:
      "Lists your runs, newest first, one page at a time (pass nextCursor as cursor for the next): every chat's, " +
      "or one chat's with chatId. Filters: status (one, or several separated by commas, e.g. 'QUEUED,RUNNING,WAITING' " +
      'for the active ones), since and until (ISO 8601 instants: created at or after since, before until), and ' +
      'metadata (an object of pairs a run must all carry, as given on send_message). Each run has its id, chatId, ' +
      'status, metadata and times; read one in full with get_run. Returns { data, nextCursor }.',
    input: listRunsInputSchema,
    output: runListSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    run: async (ctx, { chatId, ...query }) => ({
      result: await ctx.ops.runs.listRuns(ctx.caller, query, chatId),
    }),
  }),

  get_messages: define({
    title: 'Get messages',
    description:
      "Reads a chat's messages, oldest first (order: 'desc' for newest first), one page at a time (pass nextCursor as cursor for the next). " +
      'Each message has its role, content blocks (text, images, tool use and results) and the run that made it.',
    input: getMessagesInputSchema,
    output: messageListSchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    scope: 'read',
    run: async (ctx, { chatId, ...query }) => ({
      result: await ctx.ops.chats.listMessages(ctx.caller, chatId, query),
    }),
  }),

  decide_plan: define({
    title: 'Approve or reject a plan',
    description:
      'Answers the plan a planMode run is WAITING on (the pending waitpoint in its snapshot). approved: true ' +
      'lets the run carry out the plan; false ends the run CANCELLED. feedback is passed on. Returns the ' +
      'waitpoint; then follow the run with wait_for_run.',
    input: decidePlanInputSchema,
    output: waitpointSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    scope: 'write',
    // The ids are the route's path; all the rest is its body, passed on whole (planHash included).
    run: async (ctx, { chatId, runId, waitpointId, ...decision }) => ({
      result: await ctx.ops.runs.decidePlan(ctx.caller, { chatId, runId, waitpointId }, decision),
    }),
  }),

  cancel_run: define({
    title: 'Cancel a run',
    description:
      'Stops an active run: it ends CANCELLED, whatever it was doing. A run already finished fails with ' +
      'RUN_NOT_ACTIVE. Returns the run snapshot, with cancelRequestedAt set (a pending plan reads CANCELLED); ' +
      'its status turns CANCELLED moments later, which wait_for_run waits for.',
    input: runIdsInputSchema,
    output: runSnapshotSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    scope: 'write',
    run: async (ctx, input) => ({ result: await ctx.ops.runs.cancelRun(ctx.caller, input) }),
  }),

  ...Object.fromEntries(TOOL_NAMES.map((name) => [name, mediaTool(name)])),
};

/** The tool of that name; nothing for another name, or for what is not a name. */
export const toolNamed = (name: unknown): McpTool | undefined =>
  typeof name === 'string' && Object.hasOwn(MCP_TOOLS, name) ? MCP_TOOLS[name] : undefined;

/** JSON Schema 2020-12, the dialect MCP assumes when a schema names none. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return rest;
}

const IDEMPOTENCY_KEY = 'idempotencyKey';
const idempotencyKeyArgument = idempotencyKeySchema.describe(
  "Makes a retry safe: a call with a key already used by you within 24 hours gets that call's answer, " +
    'and nothing is sent, run or charged again. 1–255 visible ASCII characters, e.g. a UUID.',
);

/** The tool's input schema, with the optional idempotencyKey argument of a tool that takes one. */
function inputSchema(tool: McpTool): Tool['inputSchema'] {
  const schema = jsonSchema(tool.input, 'input') as Tool['inputSchema'];
  if (!tool.idempotent) return schema;
  return {
    ...schema,
    properties: { ...schema.properties, [IDEMPOTENCY_KEY]: jsonSchema(idempotencyKeyArgument, 'input') },
  };
}

/** tools/list: the same for every caller, built once. */
export const TOOL_LIST: Tool[] = Object.entries(MCP_TOOLS).map(([name, tool]) => ({
  name,
  title: tool.title,
  description: tool.description,
  inputSchema: inputSchema(tool),
  // A failed call's structuredContent is the error envelope, so the schema admits both.
  outputSchema: {
    type: 'object',
    ...jsonSchema(z.union([tool.output, errorEnvelopeSchema]), 'output'),
  } as Tool['outputSchema'],
  annotations: { title: tool.title, ...tool.annotations },
}));

const toDetails = (issues: z.core.$ZodIssue[], prefix: string[] = []) =>
  issues.map((issue) => ({
    path: ['arguments', ...prefix, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));

/**
 * The arguments as the tool's schema reads them, and the idempotency key apart; every problem is
 * listed, as REST lists them.
 */
export function parseArguments(
  tool: McpTool,
  args: Record<string, unknown>,
): { input: unknown; idempotencyKey?: string } {
  const { [IDEMPOTENCY_KEY]: rawKey, ...rest } = args;
  const toolArgs = tool.idempotent ? rest : args;
  let idempotencyKey: string | undefined;
  if (tool.idempotent && rawKey !== undefined) {
    const key = idempotencyKeySchema.safeParse(rawKey);
    if (!key.success) throw new ValidationError(toDetails(key.error.issues, [IDEMPOTENCY_KEY]));
    idempotencyKey = key.data;
  }
  const keyed = idempotencyKey === undefined ? {} : { idempotencyKey };
  if (tool.validate === false) return { input: toolArgs, ...keyed };
  const result = tool.input.safeParse(toolArgs);
  if (result.success) return { input: result.data, ...keyed };
  throw new ValidationError(toDetails(result.error.issues));
}
