import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric of the gateway process; served at /metrics on its operator port (METRICS_PORT). */
export const metrics = new Registry();
collectDefaultMetrics({ register: metrics });

/**
 * Each repair the reconciler makes. A repair of a run means the workflow left its run unfinished:
 * a bug, or an operator's terminate; the count should stay at zero. A delivery started late is
 * what a Temporal outage at the moment of the event leaves behind.
 */
export const reconcilerRepairs = new Counter({
  name: 'agent_reconciler_repairs_total',
  help: 'Repairs made by the reconciler, by kind.',
  labelNames: ['kind'] as const,
  registers: [metrics],
});

/** Labelled by the route's pattern, never its path: ids would make a series per chat. */
export const httpRequestDuration = new Histogram({
  name: 'agent_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
  registers: [metrics],
});

/** 409 (RUN_ACTIVE, RUN_NOT_ACTIVE, …) and 429 (RATE_LIMITED) among them, by their error code. */
export const httpErrors = new Counter({
  name: 'agent_http_errors_total',
  help: 'Error answers, by HTTP status and error code.',
  labelNames: ['status', 'code'] as const,
  registers: [metrics],
});

export const runsAdmitted = new Counter({
  name: 'agent_runs_admitted_total',
  help: 'Runs admitted (a send written with its QUEUED run), by whether the plan needs approval.',
  labelNames: ['plan_mode'] as const,
  registers: [metrics],
});

/**
 * What each admitted send's answer did about its workflow's start (operations/runs/start-pace.ts):
 * `started`, it waited and carries `triggerRunId`; `timed_out`, it waited and the start did not
 * answer in time; `not_started`, the start failed within the wait (the dispatcher starts the run);
 * `skipped`, recent starts were too slow for the wait to be worth making.
 */
export const sendStartWaits = new Counter({
  name: 'agent_send_start_waits_total',
  help: "Admitted sends by what their answer did about the workflow's start: started, timed_out, not_started or skipped.",
  labelNames: ['outcome'] as const,
  registers: [metrics],
});

/** A run's live streams (operations/runs/events.ts) this process is sending now. */
export const sseStreamsOpen = new Gauge({
  name: 'agent_sse_streams_open',
  help: 'Server-sent event streams of runs open now.',
  registers: [metrics],
});

/** MCP waits (wait_for_run, resources/subscribe) this process holds open now. */
export const mcpWaitsOpen = new Gauge({
  name: 'agent_mcp_waits_open',
  help: 'MCP waits (wait_for_run, resources/subscribe) open now.',
  registers: [metrics],
});

/** Refreshed on each scrape from Temporal's DescribeTaskQueue (see operations/health.ts). */
export const taskQueuePollers = new Gauge({
  name: 'agent_task_queue_pollers',
  help: 'Pollers Temporal saw recently on the task queue, by task type (workflow, activity).',
  labelNames: ['task_queue', 'type'] as const,
  registers: [metrics],
});

export const taskQueueLastPollAge = new Gauge({
  name: 'agent_task_queue_last_poll_age_seconds',
  help: 'Seconds since the most recent poll of the task queue, by task type; absent with no poller.',
  labelNames: ['task_queue', 'type'] as const,
  registers: [metrics],
});
