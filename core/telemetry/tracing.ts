import { randomBytes } from 'node:crypto';
import {
  TraceFlags,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Context as TraceContext,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResourcesSync, envDetectorSync, Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** What the Temporal interceptors need: the processor workflow spans go through, and who made them. */
export interface Tracing {
  resource: Resource;
  processor: SpanProcessor;
  /** Flushes the spans still buffered, and unregisters the global tracer. */
  shutdown(): Promise<void>;
}

type TracesExporter = 'otlp' | 'console';

/** Whether this process registered a tracer (startTracing), until its shutdown. */
let registered = false;

/**
 * Whether spans go anywhere: while they do not, a caller can skip making them at all (the API's
 * no-op spans still cost their allocations and context switches, on every request).
 */
export function tracingActive(): boolean {
  return registered;
}

/**
 * Which exporter the standard OTEL_* variables ask for. Traces are off unless asked for: by
 * OTEL_TRACES_EXPORTER (otlp or console), or by an OTLP endpoint being set; OTEL_SDK_DISABLED=true
 * and OTEL_TRACES_EXPORTER=none turn them off whatever else is set.
 */
export function requestedTracesExporter(env: NodeJS.ProcessEnv): TracesExporter | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const named = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (named === 'none') return undefined;
  if (named === 'otlp' || named === 'console') return named;
  if (named) {
    throw new Error(
      `OTEL_TRACES_EXPORTER: "${named.slice(0, 20)}" is not supported; use otlp, console or none`,
    );
  }
  return env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'otlp' : undefined;
}

/**
 * Registers the process's tracer when the OTEL_* variables ask for traces (or a test hands in its
 * exporter), else returns undefined and every span the code starts is a no-op. The OTLP exporter,
 * the sampler (OTEL_TRACES_SAMPLER) and the resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES)
 * read their own variables.
 */
export function startTracing(options: {
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  /** A test's exporter: every span is handed to it as it ends. */
  exporter?: SpanExporter;
}): Tracing | undefined {
  const kind = options.exporter ? undefined : requestedTracesExporter(options.env ?? process.env);
  if (!options.exporter && !kind) return undefined;
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(kind === 'console' ? new ConsoleSpanExporter() : new OTLPTraceExporter());
  const resource = new Resource({ 'service.name': options.serviceName }).merge(
    detectResourcesSync({ detectors: [envDetectorSync] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // Also installs the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  registered = true;
  return {
    resource,
    processor,
    async shutdown() {
      registered = false;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The tracer of this service's own spans (HTTP requests, webhook receivers in tests). */
export function serviceTracer() {
  return trace.getTracer('agent-chat-service');
}

/** The trace id of the span in progress, when tracing is on and a span is. */
export function currentTraceId(ctx: TraceContext = context.active()): string | undefined {
  const span = trace.getSpanContext(ctx);
  return span && isSpanContextValid(span) ? span.traceId : undefined;
}

/** `traceparent` (and `tracestate`) of the span in progress, for an outgoing request; empty when off. */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}

/**
 * Runs `fn` in the trace `traceId` names when no span is in progress (the dispatcher starting a
 * run the send admitted earlier), so what it starts joins the run's trace.
 */
export function inTrace<T>(traceId: string, fn: () => T): T {
  if (currentTraceId() || !/^[\da-f]{32}$/.test(traceId)) return fn();
  const parent = trace.setSpanContext(context.active(), {
    traceId,
    spanId: randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  return context.with(parent, fn);
}
