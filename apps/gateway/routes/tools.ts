import type { RequestHandler } from 'express';
import { NotFoundError } from '../../../core/errors/app-error';
import { toolResultSchema } from '../../../core/schemas/events';
import { parseToolInput, TOOL_NAMES, TOOLS, type ToolName } from '../../../core/tools/registry';
import type { Operations } from '../../../operations';
import { TOOL_ERRORS } from '../../../operations/tools';
import { currentAuth } from '../http/auth-context';
import {
  IDEMPOTENCY_ERRORS,
  idempotencyHeadersSchema,
  replayable,
  replayedHeaderSchema,
} from '../http/idempotency';
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
      request: { headers: idempotencyHeadersSchema, body: TOOLS[name].input },
      before: [validateToolBody(name)],
      responses: {
        200: { description: 'The tool result.', schema: toolResultSchema, headers: replayedHeaderSchema },
      },
      errors: [...IDEMPOTENCY_ERRORS, ...TOOL_ERRORS[name]],
      handler: async ({ body, headers }, req) =>
        replayable(
          200,
          await ops.tools.callTool(currentAuth(req), { name, input: body }, headers['idempotency-key']),
        ),
    });
  }

  // Any other name: 404 UNKNOWN_TOOL, after the key is checked, and listed in no operation.
  routes.refuseOthers(
    '/api/v1/tools',
    'apiKey',
    (name) => new NotFoundError('UNKNOWN_TOOL', `There is no tool named ${name}.`),
  );
}
