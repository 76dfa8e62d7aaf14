import { createReadStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { publicBaseUrl } from '../../../core/config/config';
import type { Config } from '../../../core/config/config';
import type { RouteTable } from '../http/route-table';

const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * The reference page's script comes from the pinned npm package, served by this gateway: the page
 * works offline and behind a strict proxy, and shows the version this build was tested with.
 */
const SCALAR_DIR = path.dirname(path.dirname(require.resolve('@scalar/api-reference')));
const SCALAR_VERSION = (
  JSON.parse(readFileSync(path.join(SCALAR_DIR, 'package.json'), 'utf8')) as { version: string }
).version;
const ASSETS = {
  // The version in the name lets a browser keep it for good: a new version is a new URL.
  [`api-reference-${SCALAR_VERSION}.js`]: path.join(SCALAR_DIR, 'dist', 'browser', 'standalone.js'),
  // A file, not an inline script, so the policy below needs no 'unsafe-inline' for scripts.
  'init.js': undefined,
} as const;
const INIT_SCRIPT = `Scalar.createApiReference('#app', ${JSON.stringify({
  url: OPENAPI_PATH,
  // No calls to Scalar's hosted services: no telemetry, no proxy, no hosted fonts.
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
})});\n`;

/**
 * Only this origin: a compromised or swapped CDN cannot run in the page. Styles may be inline (the
 * reference sets them at runtime); images of the document may be data: URLs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Agent Chat and Tool Service: API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/assets/api-reference-${SCALAR_VERSION}.js"></script>
    <script src="/docs/assets/init.js"></script>
  </body>
</html>
`;

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
      200: {
        description: 'The document',
        schema: z.looseObject({ openapi: z.literal('3.1.0') }).openapi({
          example: {
            openapi: '3.1.0',
            info: { title: 'Agent Chat and Tool Service', version: '1.0.0' },
            paths: {},
          },
        }),
      },
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
    summary: 'Interactive API reference (HTML) over the OpenAPI document, served whole by this gateway',
    tag: 'Docs',
    auth: 'none',
    extension: true,
    request: {},
    responses: { 200: { description: 'An HTML page' } },
    errors: [],
    handler: async (_input, _req, res) => {
      res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
      res.status(200).type('text/html').send(PAGE);
      return { status: 200 };
    },
  });

  routes.add({
    method: 'get',
    path: '/docs/assets/:file',
    operationId: 'getApiReferenceAsset',
    summary: "The reference page's scripts",
    tag: 'Docs',
    auth: 'none',
    extension: true,
    request: {
      params: z.object({ file: z.enum(Object.keys(ASSETS) as [string, ...string[]]) }),
    },
    responses: { 200: { description: 'A script' } },
    errors: [],
    handler: async ({ params }, _req, res) => {
      const file = ASSETS[params.file];
      res.status(200).type('text/javascript');
      res.setHeader('x-content-type-options', 'nosniff');
      if (!file) {
        res.setHeader('cache-control', 'no-cache');
        res.send(INIT_SCRIPT);
      } else {
        res.setHeader('cache-control', 'public, max-age=31536000, immutable');
        await pipeline(createReadStream(file), res);
      }
      return { status: 200 };
    },
  });
}
