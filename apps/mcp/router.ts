import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { publicBaseUrl, type Config } from '../../core/config/config';
import { OAUTH_SCOPES } from '../../core/auth/scopes';
import { OAUTH_ACCESS_PREFIX } from '../../core/auth/tokens';
import { AppError } from '../../core/errors/app-error';
import type { Logger } from '../../core/logging/logger';
import { rateLimitHeaders, type UserLimit } from '../../operations/limits';
import type { Caller, Operations } from '../../operations';
import { InsufficientScopeError, requireScopes } from '../../operations/oauth';
import { bearerToken, jsonBody } from '../../core/http/request';
import { addLogContext } from '../../core/logging/context';
import { createOAuthRouter } from './oauth';
import { createMcpServer } from './server';
import { scopesNeeded } from './scopes';
import { toolNamed } from './tools';

export const MCP_PATH = '/mcp';
/** RFC 9728: the metadata of the resource at /mcp is at this path with the resource's path appended. */
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** A tools/call of send_message also counts against the user's send limit, as REST sends do. */
function isSend(body: unknown): boolean {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null;
  return message?.method === 'tools/call' && message.params?.name === 'send_message';
}

/**
 * A JSON-RPC batch is refused before anything is counted: the protocol versions served here
 * (2025-06-18 on) have none, and each call must count against the key's limits as one REST call
 * does, which a hundred calls in one POST would not.
 */
const refuseBatch: RequestHandler = (req, res, next) => {
  if (!Array.isArray(req.body)) return next();
  res.status(400).json({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32600, message: 'Invalid Request: send one JSON-RPC message per request (no batches).' },
  });
};

/**
 * Whether the request is answered on an event stream: when notifications come before its result (a
 * call asking for progress, a subscription, which sends its updates on its own request) or the
 * result may take minutes (a tool that waits). Any other request is answered with plain JSON,
 * which spares both sides the stream.
 */
function needsStream(body: unknown): boolean {
  const message = body as {
    method?: unknown;
    params?: { name?: unknown; _meta?: { progressToken?: unknown } };
  } | null;
  if (message?.method === 'resources/subscribe' || message?.params?._meta?.progressToken !== undefined)
    return true;
  return message?.method === 'tools/call' && toolNamed(message.params?.name)?.waits === true;
}

/**
 * The headers the SDK's transport reads from a POST (its checks of what the client accepts and
 * sends, and of the protocol version). Only these are handed over: the handlers take their caller
 * from our own authentication, so the credential is not copied into the SDK's request info, and a
 * Request of these four is cheaper to build than one of all of them.
 */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'] as const;

/**
 * The request as the SDK's web-standard transport reads it: method and those headers (the body is
 * handed over already parsed).
 */
function webRequest(req: Request, base: string): globalThis.Request {
  const headers: Record<string, string> = {};
  for (const name of TRANSPORT_HEADERS) {
    const value = req.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return new globalThis.Request(new URL(req.originalUrl, base), { method: req.method, headers });
}

/**
 * Writes the transport's answer: a JSON answer in one write with its length; an event stream as
 * its events come. (The SDK's Node wrapper goes through @hono/node-server, whose writer waits a
 * timer tick for a body's end before it answers.) The JSON goes as a string, which Node sends with
 * the headers in one write, as REST's answers go; as a Buffer, headers and body would go in a
 * writev, which costs the gateway more CPU a call. A client that goes away cancels the stream.
 */
async function writeResponse(answer: globalThis.Response, res: Response): Promise<void> {
  res.status(answer.status);
  answer.headers.forEach((value, name) => res.setHeader(name, value));
  if (!answer.body) return void res.end();
  if (!answer.headers.get('content-type')?.startsWith('text/event-stream')) {
    return void res.end(await answer.text());
  }
  res.flushHeaders();
  const reader = answer.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) res.write(chunk.value);
  res.end();
}

/**
 * The MCP route, `POST /mcp` (Streamable HTTP, stateless): each request builds its own server and
 * transport for its caller and ends with its answer, so no session lives in a process. GET (a
 * standalone event stream) and DELETE (ending a session) have nothing to serve then: 405.
 */
export function createMcpRouter(ops: Operations, config: Config, logger: Logger): Router {
  const router = express.Router();
  const base = publicBaseUrl(config);
  const resource = `${base}${MCP_PATH}`;
  const resourceMetadataUrl = `${base}${RESOURCE_METADATA_PATH}${MCP_PATH}`;
  const allowedOrigins = new Set([
    new URL(base).origin,
    ...config.MCP_ALLOWED_ORIGINS.map((o) => new URL(o).origin),
  ]);

  // An authorization server on plain http elsewhere than this machine would hand out codes and
  // tokens readable on the way: there, only API keys are offered.
  const issuer = new URL(base);
  const oauth = issuer.protocol === 'https:' || ['localhost', '127.0.0.1'].includes(issuer.hostname);

  const metadata: RequestHandler = (_req, res) => {
    res.json({
      resource,
      ...(oauth ? { authorization_servers: [issuer.href] } : {}),
      resource_name: 'Agent Chat Service (MCP)',
      bearer_methods_supported: ['header'],
      scopes_supported: OAUTH_SCOPES,
    });
  };
  router.get([RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}${MCP_PATH}`], metadata);
  if (oauth) router.use(createOAuthRouter(ops, { issuer }));

  /** DNS rebinding: a browser page may only reach /mcp from an origin we serve or allow. */
  const checkOrigin: RequestHandler = (req, _res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin))
      throw new AppError('FORBIDDEN', 'This Origin may not call the MCP endpoint.');
    next();
  };

  const challenge = (scopes: readonly string[], error?: string) =>
    `Bearer resource_metadata="${resourceMetadataUrl}", scope="${scopes.join(' ')}"` +
    (error ? `, error="${error}"` : '');

  /**
   * The API key, as on /api/v1 (its RateLimit headers on the answer), or an OAuth access token,
   * which must also carry the scopes the request's messages need. A missing or bad credential
   * points the client at the resource metadata (401); a token short of a scope is told which (403
   * insufficient_scope, RFC 6750 3.1), so the client can ask the user for it.
   */
  const authenticate = async (req: Request, res: Response): Promise<Caller> => {
    const limits: UserLimit[] = isSend(req.body) ? [ops.limits.api, ops.limits.send] : [ops.limits.api];
    try {
      const token = bearerToken(req);
      const { caller, rateLimit } = token?.startsWith(OAUTH_ACCESS_PREFIX)
        ? await ops.oauth.authenticateAccessToken(token, limits, 'mcp')
        : await ops.identity.authenticateApiKey(token, limits, 'mcp');
      if (rateLimit) res.set(rateLimitHeaders(rateLimit.limit, rateLimit.remaining, rateLimit.resetSeconds));
      requireScopes(caller, scopesNeeded(req.body));
      addLogContext({ userId: caller.userId });
      return caller;
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHORIZED')
        res.setHeader(
          'www-authenticate',
          challenge(OAUTH_SCOPES, req.headers.authorization ? 'invalid_token' : undefined),
        );
      if (err instanceof InsufficientScopeError)
        res.setHeader('www-authenticate', challenge(err.scopes, 'insufficient_scope'));
      throw err;
    }
  };

  const serve: RequestHandler = async (req, res) => {
    const server = createMcpServer({ ops, caller: await authenticate(req, res), config, logger });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !needsStream(req.body),
    });
    // A client gone before its whole answer stops the work (the handler's signal). Once the
    // answer is written, nothing is left running to stop, and closing would only build the SDK's
    // "connection closed" error (a stack trace) for no one.
    res.on('close', () => {
      if (res.writableFinished) return;
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await writeResponse(await transport.handleRequest(webRequest(req, base), { parsedBody: req.body }), res);
  };

  router.post(MCP_PATH, checkOrigin, jsonBody, refuseBatch, serve);
  router.all(MCP_PATH, checkOrigin, (req, _res, next) => {
    if (req.method === 'OPTIONS') return next();
    throw new AppError('METHOD_NOT_ALLOWED', 'This MCP server is stateless: POST only.', undefined, {
      allow: 'POST',
    });
  });
  return router;
}
