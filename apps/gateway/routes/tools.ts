import type { RequestHandler } from 'express';
import { z } from 'zod';
import { NotFoundError } from '../../../core/errors/app-error';
import { toolResultSchema } from '../../../core/schemas/events';
import { parseToolInput, TOOL_NAMES, TOOLS, type ToolName } from '../../../core/tools/registry';
import type { Operations } from '../../../operations';
import { TOOL_ERRORS } from '../../../operations/tools';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

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
export function registerToolsRoutes(routes: RouteTable, ops: Operations): void {
  for (const name of TOOL_NAMES) {
    routes.add({
      method: 'post',
      path: `/api/v1/tools/${name}`,
      operationId: `tool_${name}`,
      summary: `Run ${name} and wait for its result (up to 5 minutes).`,
      tag: 'Tools',
      auth: 'apiKey',
      request: { body: TOOLS[name].input },
      before: [validateToolBody(name)],
      responses: { 200: { description: 'The tool result.', schema: toolResultSchema } },
      errors: TOOL_ERRORS[name],
      handler: async ({ body }, req) => ({
        status: 200,
        body: await ops.tools.callTool(currentAuth(req), name, body),
      }),
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
