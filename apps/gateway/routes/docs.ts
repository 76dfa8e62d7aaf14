import type { RequestHandler } from 'express';
import { z } from 'zod';
import { publicBaseUrl } from '../../../core/config/config';
import type { Config } from '../../../core/config/config';
import type { RouteTable } from '../http/route-table';

const OPENAPI_PATH = '/api/v1/openapi.json';

let reference: Promise<RequestHandler> | undefined;

/** Scalar's package is ESM-only: loaded on first use, so this module stays plain CommonJS. */
function scalarReference(): Promise<RequestHandler> {
  reference ??= import('@scalar/express-api-reference').then(
    ({ apiReference }) => apiReference({ url: OPENAPI_PATH }) as unknown as RequestHandler,
  );
  return reference;
}

export function registerDocsRoutes(routes: RouteTable, config: Config): void {
  // Built on first request, not here: routes registered after this one must be in it too.
  let document: object | undefined;

  routes.add({
    method: 'get',
    path: OPENAPI_PATH,
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Docs',
    auth: 'none',
    extension: true,
    request: {},
    responses: {
      200: { description: 'The document', schema: z.looseObject({ openapi: z.literal('3.1.0') }) },
    },
    errors: [],
    handler: async () => {
      document ??= routes.document([{ url: publicBaseUrl(config) }]);
      return { status: 200, body: document };
    },
  });

  routes.add({
    method: 'get',
    path: '/docs',
    operationId: 'getApiReference',
    summary: 'Interactive API reference (HTML) over the OpenAPI document',
    tag: 'Docs',
    auth: 'none',
    extension: true,
    request: {},
    responses: { 200: { description: 'An HTML page' } },
    errors: [],
    handler: async (_input, req, res) => {
      const render = await scalarReference();
      await render(req, res, () => undefined);
      // The page is already sent; the table's own `end()` afterwards finds the response finished.
      return { status: 200 };
    },
  });
}
