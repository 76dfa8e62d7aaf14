import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { AppError, NotFoundError, type ErrorCode } from '../../../core/errors/app-error';
import { isFailureType } from '../../../core/errors/failures';
import { parseToolInput, TOOL_NAMES, TOOLS, type ToolName } from '../../../core/tools/registry';
import { toolResultSchema } from '../../../core/tools/schemas';
import { toolNameSearchAttribute, userIdSearchAttribute } from '../../../workflows/search-attributes';
import {
  TOOL_CALL_WORKFLOW_TYPE,
  toolCallWorkflowId,
  type ToolCallInput,
  type ToolCallOutput,
} from '../../../workflows/tool-call.contract';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

const ERRORS: Record<ToolName, ErrorCode[]> = {
  crop_image: [
    'INVALID_RECTANGLE',
    'ATTACHMENT_NOT_FOUND',
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
  ai_image_2: [
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'PROVIDER_NOT_CONFIGURED',
    'TIMEOUT',
  ],
  merge_videos: [
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
};

/**
 * Runs before the route's own validation so a bad crop rectangle answers INVALID_RECTANGLE rather
 * than INVALID_REQUEST; both come from the tool's one schema in the registry.
 */
const validateToolBody =
  (name: ToolName): RequestHandler =>
  (req, _res, next) => {
    parseToolInput(name, req.body);
    next();
  };

/** The blocking tool routes: one per tool, each waiting for its tool-call workflow. */
export function registerToolsRoutes(routes: RouteTable, deps: GatewayDeps): void {
  for (const name of TOOL_NAMES) {
    const tool = TOOLS[name];
    routes.add({
      method: 'post',
      path: `/api/v1/tools/${name}`,
      operationId: `tool_${name}`,
      summary: `Run ${name} and wait for its result (up to 5 minutes).`,
      tag: 'Tools',
      auth: 'apiKey',
      request: { body: tool.input },
      before: [validateToolBody(name)],
      responses: { 200: { description: 'The tool result.', schema: toolResultSchema } },
      errors: ERRORS[name],
      handler: async ({ body }, req) => {
        const { userId } = currentAuth(req);
        if (tool.provider(deps.config) === 'none') {
          throw new AppError('PROVIDER_NOT_CONFIGURED', `No provider is configured for ${name}.`);
        }
        const result = await runBlocking(deps, {
          toolCallId: randomUUID(),
          toolName: name,
          input: body,
          userId,
        });
        return { status: 200, body: result };
      },
    });
  }

  routes.add({
    method: 'post',
    path: '/api/v1/tools/:toolName',
    operationId: 'unknownTool',
    summary: 'Any other tool name answers 404 UNKNOWN_TOOL.',
    tag: 'Tools',
    auth: 'apiKey',
    request: {
      params: z.object({
        // The three tools have their own routes, matched first; this one sees only other names.
        toolName: z.string().openapi({ not: { enum: [...TOOL_NAMES] } }),
      }),
    },
    responses: {},
    errors: ['UNKNOWN_TOOL'],
    handler: ({ params }) => {
      throw new NotFoundError('UNKNOWN_TOOL', `There is no tool named ${params.toolName}.`);
    },
  });
}

/**
 * Starts the call's workflow and waits for it within TOOL_ROUTE_TIMEOUT. Past the window the
 * workflow is cancelled (its provider job with it) and the answer is 504 TIMEOUT; a permanent
 * failure answers the error its type names.
 */
async function runBlocking(deps: GatewayDeps, input: ToolCallInput): Promise<ToolCallOutput> {
  const handle = await deps.temporal.client.workflow.start(TOOL_CALL_WORKFLOW_TYPE, {
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: toolCallWorkflowId(input.toolCallId),
    args: [input],
    typedSearchAttributes: [
      { key: toolNameSearchAttribute, value: input.toolName },
      { key: userIdSearchAttribute, value: input.userId },
    ],
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), deps.config.TOOL_ROUTE_TIMEOUT);
  });
  try {
    const outcome = await Promise.race([handle.result() as Promise<ToolCallOutput>, timedOut]);
    if (outcome === 'timeout') {
      await handle.cancel().catch((err: Error) => deps.logger.warn({ err }, 'tool call cancel failed'));
      throw new AppError('TIMEOUT', 'The tool did not finish in time.');
    }
    return outcome;
  } catch (err) {
    throw toAppError(err);
  } finally {
    clearTimeout(timer);
  }
}

function toAppError(err: unknown): unknown {
  if (!(err instanceof WorkflowFailedError)) return err;
  let cause: unknown = err;
  while (cause instanceof Error) {
    // The failure the workflow ended with: a permanent one, or the last attempt's of a retried one.
    if (cause instanceof ApplicationFailure && isFailureType(cause.type)) {
      return new AppError(cause.type, cause.message);
    }
    cause = cause.cause;
  }
  // Retries spent on transient failures: the provider kept failing.
  return new AppError('PROVIDER_ERROR', "The tool's provider failed.");
}
