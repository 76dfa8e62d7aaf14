import type { Payload } from '@temporalio/common';
import type * as OpenTelemetry from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  defaultPayloadConverter,
  workflowInfo,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { chatIdSearchAttribute, runIdSearchAttribute, userIdSearchAttribute } from './search-attributes';

/**
 * Lines a workflow logs (`log` of @temporalio/workflow) carry the ids every other line does, read
 * from the execution's search attributes: `agentRunId` (Temporal's own `runId` is the execution's;
 * the worker's logger turns them into `runId` and `temporalRunId`), `chatId` and `userId`. Log
 * attributes never reach the history.
 */
const logIds: WorkflowOutboundCallsInterceptor = {
  getLogAttributes(input, next) {
    const attributes = workflowInfo().typedSearchAttributes;
    const ids = {
      agentRunId: attributes.get(runIdSearchAttribute),
      chatId: attributes.get(chatIdSearchAttribute),
      userId: attributes.get(userIdSearchAttribute),
    };
    return next({ ...input, ...Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) });
  },
};

/**
 * The header Temporal's OpenTelemetry client interceptor writes on a start: the propagated
 * context, an empty map when the starter was not tracing. (The package exports the name, from a
 * module that would bring OpenTelemetry into every execution.)
 */
const TRACE_HEADER = '_tracer-data';

/** Whether a start carried a trace to join (its propagated context has any field). */
function startCarriesTrace(headers: Record<string, Payload>): boolean {
  const header = headers[TRACE_HEADER];
  if (header === undefined) return false;
  const carrier: unknown = defaultPayloadConverter.fromPayload(header);
  return typeof carrier === 'object' && carrier !== null && Object.keys(carrier).length > 0;
}

interface WorkflowTracing {
  inbound: OpenTelemetry.OpenTelemetryInboundInterceptor;
  outbound: OpenTelemetry.OpenTelemetryOutboundInterceptor;
  internals: OpenTelemetry.OpenTelemetryInternalsInterceptor;
}

/**
 * OpenTelemetry's workflow interceptors, evaluated only for an execution that traces: the sandbox
 * evaluates a workflow's modules afresh for every execution, and these (with the OpenTelemetry SDK
 * they bring) cost several milliseconds of a turn's CPU each time.
 */
function loadTracing(): WorkflowTracing {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a require is what defers the evaluation
  const otel = require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OpenTelemetry;
  return {
    inbound: new otel.OpenTelemetryInboundInterceptor(),
    outbound: new otel.OpenTelemetryOutboundInterceptor(),
    internals: new otel.OpenTelemetryInternalsInterceptor(),
  };
}

export const interceptors: WorkflowInterceptorsFactory = () => {
  // Decided once, by the execution's first call (its start, before any signal or query reaches it).
  let traced: WorkflowTracing | undefined;

  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      // Read from the start's header, which a replay sees as the first run did: whether an execution
      // runs the interceptors (which draw span ids from its seeded random numbers, as uuid4() does)
      // never depends on the worker that replays it.
      if (startCarriesTrace(input.headers)) traced = loadTracing();
      return traced ? traced.inbound.execute(input, next) : next(input);
    },
    handleSignal: (input, next) => (traced ? traced.inbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? traced.inbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? traced.inbound.validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (traced ? traced.inbound.handleQuery(input, next) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) =>
      traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input),
    startNexusOperation: (input, next) =>
      traced ? traced.outbound.startNexusOperation(input, next) : next(input),
    startChildWorkflowExecution: (input, next) =>
      traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input),
    continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? traced.outbound.signalWorkflow(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
    getMetricTags: (input, next) => (traced ? traced.outbound.getMetricTags(input, next) : next(input)),
  };
  return {
    inbound: [inbound],
    outbound: [outbound, logIds],
    internals: [
      {
        dispose(input, next) {
          // Its dispose is async, though the SDK calls it without waiting: as it would unwrapped.
          if (traced) void traced.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
