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

export const waitForRunInputSchema = runParamsSchema
  .extend({
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(60)
      .default(25)
      .describe('How long to wait at most; the snapshot as it stands then is returned.'),
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
