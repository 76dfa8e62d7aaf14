import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  workflowInfo,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { chatIdSearchAttribute, runIdSearchAttribute, userIdSearchAttribute } from './search-attributes';
import { v3OrLater } from './versions';

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

export const interceptors: WorkflowInterceptorsFactory = () => {
  const otelInbound = new OpenTelemetryInboundInterceptor();
  const otelOutbound = new OpenTelemetryOutboundInterceptor();
  const otelInternals = new OpenTelemetryInternalsInterceptor();
  // Decided once, by the execution's first call (its start, before any signal or query reaches it).
  let traced = false;

  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      // Executions from before the interceptors replay, and go on, without them (see versions.ts).
      traced = v3OrLater();
      return traced ? otelInbound.execute(input, next) : next(input);
    },
    handleSignal: (input, next) => (traced ? otelInbound.handleSignal(input, next) : next(input)),
    handleUpdate: (input, next) => (traced ? otelInbound.handleUpdate(input, next) : next(input)),
    validateUpdate: (input, next) => (traced ? otelInbound.validateUpdate(input, next) : next(input)),
    handleQuery: (input, next) => (traced ? otelInbound.handleQuery(input, next) : next(input)),
  };
  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) => (traced ? otelOutbound.scheduleActivity(input, next) : next(input)),
    scheduleLocalActivity: (input, next) =>
      traced ? otelOutbound.scheduleLocalActivity(input, next) : next(input),
    startNexusOperation: (input, next) =>
      traced ? otelOutbound.startNexusOperation(input, next) : next(input),
    startChildWorkflowExecution: (input, next) =>
      traced ? otelOutbound.startChildWorkflowExecution(input, next) : next(input),
    continueAsNew: (input, next) => (traced ? otelOutbound.continueAsNew(input, next) : next(input)),
    signalWorkflow: (input, next) => (traced ? otelOutbound.signalWorkflow(input, next) : next(input)),
    getLogAttributes: (input, next) => (traced ? otelOutbound.getLogAttributes(input, next) : next(input)),
    getMetricTags: (input, next) => (traced ? otelOutbound.getMetricTags(input, next) : next(input)),
  };
  return {
    inbound: [inbound],
    outbound: [outbound, logIds],
    internals: [
      {
        dispose(input, next) {
          // Its dispose is async, though the SDK calls it without waiting: as it would unwrapped.
          if (traced) void otelInternals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
