import { z } from 'zod';
import { chatParamsSchema, messageListQuerySchema } from './chats';
import {
  planDecisionSchema,
  runListQueryFields,
  runParamsSchema,
  untilNotBeforeSince,
  waitpointParamsSchema,
} from './runs';

/**
 * The inputs of the MCP tools that have no REST body of their own: each joins the path and query
 * schemas of the REST route doing the same work, so both validate alike.
 */
export const getMessagesInputSchema = chatParamsSchema.extend(messageListQuerySchema.shape).strict();

export const decidePlanInputSchema = waitpointParamsSchema.extend(planDecisionSchema.shape).strict();

export const runIdsInputSchema = runParamsSchema.strict();

/** How long a tool that waits waits at most, in seconds (MCP_WAIT_MAX caps it too). */
const waitSeconds = (what: string) => z.number().int().min(1).max(60).default(25).describe(what);

export const waitForRunInputSchema = runParamsSchema
  .extend({
    timeoutSeconds: waitSeconds('How long to wait at most; the snapshot as it stands then is returned.'),
  })
  .strict();

/** list_runs: GET /api/v1/runs's query, or a chat's runs (GET /api/v1/chats/{chatId}/runs) with chatId. */
export const listRunsInputSchema = z
  .object({
    chatId: z.uuid().optional().describe("Only this chat's runs; every chat's when left out."),
    ...runListQueryFields,
  })
  .strict()
  .refine(...untilNotBeforeSince);

/**
 * follow_chat: GET /api/v1/chats/{chatId}/events as a long poll. `after` is its `Last-Event-ID`;
 * without it the chat's snapshot comes first.
 */
export const followChatInputSchema = chatParamsSchema
  .extend({
    after: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'The lastEventId of the previous call: what follows it; left out, the chat as it stands first.',
      ),
    timeoutSeconds: waitSeconds('How long to wait at most for an event; none came then, events is empty.'),
  })
  .strict();

export const followChatOutputSchema = z.object({
  events: z
    .array(
      z.object({
        id: z.number().int(),
        event: z
          .string()
          .describe(
            'snapshot, queued, status, text.delta, tool.started, tool.finished, waitpoint.opened, waitpoint.resolved',
          ),
        runId: z.uuid().optional().describe('The run the event is of; none on a snapshot.'),
        data: z
          .unknown()
          .describe("A snapshot's chat (its unfinished runs), or the event as the run's stream sends it."),
      }),
    )
    .describe('Every event after `after`, in order; several when they came together.'),
  lastEventId: z.number().int().describe('Give it as `after` to the next call.'),
});
