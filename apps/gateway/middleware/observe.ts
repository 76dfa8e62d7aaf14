import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Request, RequestHandler } from 'express';
import { withLogContext } from '../../../core/logging/context';
import { httpRequestDuration } from '../../../core/metrics/registry';
import { serviceTracer } from '../../../core/telemetry/tracing';

/** Probes answer every few seconds: counted, but no trace of their own. */
const UNTRACED = new Set(['/healthz', '/readyz']);

/** The matched route's pattern (`/api/v1/chats/:chatId`); what matched none is one series. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : 'unmatched';
}

/**
 * Around every request: its span (continuing the caller's `traceparent`), its log context (the
 * ids the guards and operations add as they learn them; see core/logging/context.ts) and, once
 * answered, its duration by route and status.
 */
export function observeRequests(): RequestHandler {
  return (req, res, next) => {
    const stopTimer = httpRequestDuration.startTimer({ method: req.method });
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = UNTRACED.has(req.path)
      ? undefined
      : serviceTracer().startSpan(
          req.method,
          { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } },
          parent,
        );
    res.once('close', () => {
      const route = routeOf(req);
      // A client that hung up before the answer was sent is told apart from the status it would have had.
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      stopTimer({ route, status });
      if (!span) return;
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    const active = span ? trace.setSpan(parent, span) : context.active();
    context.with(active, () => withLogContext({}, next));
  };
}
