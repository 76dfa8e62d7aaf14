import express, { type Express, type RequestHandler, type Router } from 'express';
import { createOperations, type Operations } from '../../operations';
import { createMcpRouter } from '../mcp/router';
import { consoleApp } from '../console/serve';
import type { GatewayDeps } from './deps';
import { RouteTable } from './http/route-table';
import { apiKeyGuard, consoleGuard, sessionGuard } from './middleware/auth';
import { errorHandler, notFoundHandler } from './middleware/errors';
import { observeRequests } from './middleware/observe';
import { transportSecurity } from './middleware/transport-security';
import { registerChatsRoutes } from './routes/chats';
import { registerDocsRoutes } from './routes/docs';
import { registerFilesRoutes } from './routes/files';
import { registerHealthRoutes } from './routes/health';
import { registerIdentityRoutes } from './routes/identity';
import { registerRunsRoutes } from './routes/runs';
import { registerToolsRoutes } from './routes/tools';
import { registerUploadsRoutes } from './routes/uploads';
import { registerWebhooksRoutes } from './routes/webhooks';

export interface GatewayApp {
  app: Express;
  routes: RouteTable;
  ops: Operations;
  /** The MCP route and its OAuth endpoints (apps/mcp). */
  mcp: Router;
}

/** A router of paths outside `/api/`, skipped by every request under it. */
const outsideApi =
  (router: Router): RequestHandler =>
  (req, res, next) =>
    req.path.startsWith('/api/') ? next() : router(req, res, next);

/** Builds the Express app from its dependencies; main.ts and the tests both call this. */
export function createApp(deps: GatewayDeps): GatewayApp {
  const app = express();
  app.disable('x-powered-by');
  // The route table sets ETags itself (see RouteTable.add).
  app.set('etag', false);
  app.set('trust proxy', deps.config.TRUST_PROXY);
  const hsts = transportSecurity(deps.config);
  if (hsts) app.use(hsts);

  app.use(observeRequests(deps.logger));

  const ops = createOperations(deps);
  const router = express.Router();
  const routes = new RouteTable(router, {
    apiKey: (limits, options) => [apiKeyGuard(ops, [ops.limits.api, ...limits], options)],
    session: [sessionGuard(ops)],
    console: (limits) => [consoleGuard(ops, [ops.limits.api, ...limits])],
    none: [],
  });
  registerHealthRoutes(routes, ops);
  registerIdentityRoutes(routes, ops);
  registerChatsRoutes(routes, ops);
  registerUploadsRoutes(routes, ops);
  registerFilesRoutes(routes, ops);
  registerRunsRoutes(routes, ops);
  registerToolsRoutes(routes, ops);
  registerWebhooksRoutes(routes, ops);
  registerDocsRoutes(routes, deps.config);
  routes.mirrorForSession();
  routes.methodNotAllowed();
  // MCP and its OAuth endpoints are described by their own metadata, not the OpenAPI document.
  // Ahead of the REST routes: every path of its is its own, and an assistant's every call would
  // otherwise be matched against each REST route first. Neither it nor the console serves a path
  // under /api/, so the REST calls (polls above all) go straight to their routes.
  const mcp = createMcpRouter(ops, deps.config, deps.logger);
  app.use(outsideApi(mcp));
  app.use(outsideApi(consoleApp(deps.config, ops.identity)));
  app.use(router);

  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return { app, routes, ops, mcp };
}
