import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import { Resource } from '@opentelemetry/resources';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type NativeConnection, Worker, type WorkerOptions as SdkWorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { ActivityDeps } from '../../activities/deps';
import type { Tracing } from '../../core/telemetry/tracing';
import type { WebpackConfiguration } from '@temporalio/worker/lib/worker-options';
import { observeActivity } from './interceptors';

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** How long a stopping worker lets its activities run before it cancels them (ms); default 0. */
  shutdownGraceMs?: number;
  /** Set when the process traces (core/telemetry): workflows and activities join the trace. */
  tracing?: Tracing;
}

/**
 * Modules of the workflow bundle shared by every execution of a worker (preloadModules). The SDK
 * evaluates a workflow's modules afresh for each execution, so that one's state cannot leak into
 * another's; OpenTelemetry's semantic conventions, thousands of constants that hold no state and
 * draw no random numbers, would be evaluated again for every execution that way, so they are
 * evaluated once per worker. Only modules like that may be listed: anything else could leak, or replay differently.
 */
const SHARED_WORKFLOW_MODULES = ['@opentelemetry/semantic-conventions'];
/**
 * The package says it has no side effects, so webpack drops a require whose value goes unused,
 * the preload's included: marked as having them, it is preloaded (test/workflows/bundle.test.ts).
 */
const keepPreloads = (config: WebpackConfiguration): WebpackConfiguration => ({
  ...config,
  module: {
    ...config.module,
    rules: [
      ...(config.module?.rules ?? []),
      { test: /[\\/]@opentelemetry[\\/]semantic-conventions[\\/]/, sideEffects: true },
    ],
  },
});

/**
 * Interceptors, sinks and shared modules of the worker, for createWorker and the replay test
 * alike. The workflow interceptors are the same whether or not the process traces (see
 * workflows/interceptors.ts): workflow spans leave the sandbox through the `exporter` sink, into
 * tracing's processor or nowhere. The activity interceptors join an activity to its workflow's
 * trace when tracing is on.
 */
export function workflowObservation(
  tracing: Tracing | undefined,
): Pick<SdkWorkerOptions, 'interceptors' | 'sinks' | 'bundlerOptions'> {
  return {
    bundlerOptions: { preloadModules: SHARED_WORKFLOW_MODULES, webpackConfigHook: keepPreloads },
    interceptors: {
      workflowModules: [require.resolve('../../workflows/interceptors')],
      activity: [
        ...(tracing
          ? [
              (ctx: Parameters<typeof observeActivity>[0]) => ({
                inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
                outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
              }),
            ]
          : []),
        observeActivity,
      ],
    },
    sinks: {
      exporter: tracing
        ? makeWorkflowExporter(tracing.processor, tracing.resource)
        : makeWorkflowExporter(new NoopSpanProcessor(), Resource.empty()),
    },
  };
}

/** Builds the worker from its dependencies; main.ts and the tests both call this. */
export function createWorker(deps: ActivityDeps, options: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: createActivities(deps),
    ...workflowObservation(options.tracing),
    // Cancellation reaches an activity with its next heartbeat: send them often enough to stop promptly.
    maxHeartbeatThrottleInterval: '2 seconds',
    maxCachedWorkflows: deps.config.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: deps.config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    maxConcurrentLocalActivityExecutions: deps.config.WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES,
    maxConcurrentActivityTaskExecutions: deps.config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentWorkflowTaskPolls: Math.min(
      deps.config.WORKER_WORKFLOW_TASK_POLLERS,
      deps.config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS,
    ),
    maxConcurrentActivityTaskPolls: Math.min(
      deps.config.WORKER_ACTIVITY_TASK_POLLERS,
      deps.config.WORKER_MAX_CONCURRENT_ACTIVITIES,
    ),
    ...(options.shutdownGraceMs === undefined
      ? {}
      : {
          shutdownGraceTime: options.shutdownGraceMs,
          // Cancelled activities get a few seconds to report; past that the worker gives up on them.
          shutdownForceTime: options.shutdownGraceMs + 5_000,
        }),
  });
}

/**
 * Stops a worker as SIGTERM does: polling ends at once, and the work in flight gets `graceMs` to
 * finish. Then the SDK cancels activity tasks (Temporal retries them elsewhere), and `handoff` is
 * aborted for what the SDK never cancels, a local model step, which hands its run to another
 * worker (activities/agent.ts). Without `graceMs` the stop waits for everything in flight.
 */
export function stopWorker(worker: Worker, handoff: AbortController, graceMs: number | undefined): void {
  worker.shutdown();
  if (graceMs !== undefined) setTimeout(() => handoff.abort(), graceMs).unref();
}
