import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors/app-error';
import { activeRunSchema } from './runs';

extendZodWithOpenApi(z);

/**
 * What a failure answers, on every transport: a REST error body, and the structuredContent of an
 * MCP tool result with `isError: true`. One schema, so an assistant that checks results against a
 * tool's outputSchema accepts every fact REST gives (RUN_ACTIVE's run, for one).
 */
export const errorEnvelopeSchema = z.object({
  error: z.string(),
  code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  activeRun: activeRunSchema.optional().openapi({ description: 'With 409 RUN_ACTIVE: the run to follow.' }),
});
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
