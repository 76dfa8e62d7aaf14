import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors/app-error';
import { chatParamsSchema, messageListQuerySchema } from './chats';
import { planDecisionSchema, runParamsSchema, waitpointParamsSchema } from './runs';

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

/** A tool result with `isError: true` carries the REST error envelope as its structuredContent. */
export const toolErrorSchema = z.object({
  error: z.string(),
  code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ToolError = z.infer<typeof toolErrorSchema>;
