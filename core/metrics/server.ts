import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface OperatorAnswer {
  status: number;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is, with `contentType`. */
  text?: string;
  contentType?: string;
}

export interface OperatorServerOptions {
  port: number;
  host: string;
  /** METRICS_TOKEN: when set, the guarded routes need `Authorization: Bearer <token>`. */
  token?: string;
  /** Open to anyone who reaches the port (a load balancer's health checks). */
  open?: Record<string, () => Promise<OperatorAnswer>>;
  /** What an operator reads: metrics and details. */
  guarded: Record<string, () => Promise<OperatorAnswer>>;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Compared in constant time, so the answer's timing tells nothing of the token. */
function authorized(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/**
 * The small HTTP server of an operator port (the gateway's METRICS_PORT, the worker's
 * WORKER_HTTP_PORT): GET routes only, nothing of the public API.
 */
export function startOperatorServer(options: OperatorServerOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = options.open?.[path] ?? options.guarded[path];
    const send = (answer: OperatorAnswer) => {
      if (answer.text !== undefined) {
        res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'text/plain; charset=utf-8' });
        res.end(answer.text);
      } else {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body ?? {}));
      }
    };
    if (!route) return send({ status: 404, body: { error: 'No such route.', code: 'NOT_FOUND' } });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send({ status: 405, body: { error: 'Use GET.', code: 'METHOD_NOT_ALLOWED' } });
    }
    if (!options.open?.[path] && !authorized(req.headers.authorization, options.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return send({
        status: 401,
        body: { error: 'A valid METRICS_TOKEN is required.', code: 'UNAUTHORIZED' },
      });
    }
    route().then(send, () =>
      send({ status: 500, body: { error: 'Something went wrong on our side.', code: 'INTERNAL' } }),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}

/** The Prometheus text of `registry`, followed by `more` (another exporter's text), if any. */
export async function metricsAnswer(registry: Registry, more?: string): Promise<OperatorAnswer> {
  const own = await registry.metrics();
  return {
    status: 200,
    contentType: registry.contentType,
    text: more ? `${own}\n${more.endsWith('\n') ? more : `${more}\n`}` : own,
  };
}
