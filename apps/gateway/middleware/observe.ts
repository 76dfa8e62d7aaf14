import { randomUUID } from 'node:crypto';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Context as TraceContext,
  type Span,
} from '@opentelemetry/api';
import type { Request, RequestHandler, Response } from 'express';
import { captureLogContext, inLogContext, withLogContext } from '../../../core/logging/context';
import { redactUrlSignature, type Logger } from '../../../core/logging/logger';
import { httpRequestDuration } from '../../../core/metrics/registry';
import { serviceTracer, tracingActive } from '../../../core/telemetry/tracing';

/** Probes answer every few seconds: counted, but no trace of their own. */
const UNTRACED = new Set(['/healthz', '/readyz']);
/** The liveness probe is not logged either: a line every few seconds that says nothing. */
const UNLOGGED = '/healthz';
/** A request id a client may choose (kept, so it can correlate its own logs); else one is made. */
const REQUEST_ID = /^[\w.-]{1,128}$/;

/** The matched route's pattern (`/api/v1/chats/:chatId`); what matched none is one series. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : 'unmatched';
}

function requestIdOf(req: Request): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The request's span, continuing the caller's `traceparent`, and the context it is active in. */
function startSpan(req: Request): { span: Span; context: TraceContext } {
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = serviceTracer().startSpan(
    req.method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * The level of a request's line. A poll that found nothing new (304) is the commonest request of a
 * busy gateway and tells an operator nothing: its line is debug, and costs nothing when that is off.
 */
function levelOf(res: Response, answered: boolean): 'info' | 'debug' {
  return res.statusCode === 304 && answered ? 'debug' : 'info';
}

/**
 * The request's line, written once it is answered (or its client gave up). What identifies the
 * request, not its headers: no credential a header carries can reach the line, and a signed URL's
 * `sig` is redacted.
 */
function logRequest(
  logger: Logger,
  level: 'info' | 'debug',
  req: Request,
  res: Response,
  answered: boolean,
  ms: number,
): void {
  logger[level](
    {
      req: {
        method: req.method,
        url: redactUrlSignature(req.originalUrl),
        remoteAddress: req.ip,
        userAgent: req.headers['user-agent'],
      },
      res: { statusCode: res.statusCode },
      responseTime: Math.round(ms),
    },
    answered ? 'request completed' : 'request aborted',
  );
}

/**
 * Around every request: its id (`x-request-id`, answered and on every line logged while serving
 * it), its span (continuing the caller's `traceparent`), its log context (the ids the guards and
 * operations add as they learn them; see core/logging/context.ts) and, once answered, its line and
 * its duration by route and status. One listener for all of them: a poll is the gateway's
 * commonest request, and each piece here is paid on every one.
 */
export function observeRequests(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const logged = req.path !== UNLOGGED;
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    // Tracing off, nothing of it runs: the API's no-op spans would still cost every request.
    const traced = tracingActive() && !UNTRACED.has(req.path) ? startSpan(req) : undefined;
    let fields: ReturnType<typeof captureLogContext>;
    const answer = () => {
      const ms = performance.now() - started;
      const route = routeOf(req);
      // A client that hung up before the answer was sent is told apart from the status it would have had.
      const answered = res.writableFinished;
      httpRequestDuration.observe(
        { method: req.method, route, status: answered ? String(res.statusCode) : 'aborted' },
        ms / 1000,
      );
      const level = levelOf(res, answered);
      // Written under the request's ids and trace, whichever context the answer's event came in.
      if (logged && logger.isLevelEnabled(level)) {
        const write = () => inLogContext(fields, () => logRequest(logger, level, req, res, answered, ms));
        if (traced) context.with(traced.context, write);
        else write();
      }
      if (!traced) return;
      const { span } = traced;
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('close', answer);
    const serve = () =>
      withLogContext({ requestId }, () => {
        fields = captureLogContext();
        next();
      });
    if (traced) context.with(traced.context, serve);
    else serve();
  };
}
