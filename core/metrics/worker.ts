import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric of the worker process besides the Temporal SDK's own (which its Prometheus exporter
 * serves, and the worker's /metrics appends).
 */
export const workerMetrics = new Registry();
collectDefaultMetrics({ register: workerMetrics });

const SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Outcome: completed, failed (Temporal may retry it) or cancelled. */
export const activityDuration = new Histogram({
  name: 'agent_activity_duration_seconds',
  help: 'Time one activity attempt took, by activity type and outcome.',
  labelNames: ['activity', 'outcome'] as const,
  buckets: SECONDS,
  registers: [workerMetrics],
});

/** One model call per step; outcome: ok, error or cancelled. */
export const modelStepDuration = new Histogram({
  name: 'agent_model_step_duration_seconds',
  help: 'Time one model step took (the streamed reply), by provider, model and outcome.',
  labelNames: ['provider', 'model', 'outcome'] as const,
  buckets: SECONDS,
  registers: [workerMetrics],
});

/** Kind: input (cached included), output, cached_input; summaries (compaction) counted too. */
export const modelTokens = new Counter({
  name: 'agent_model_tokens_total',
  help: 'Tokens of model calls as the providers counted them, by model (its name in MODELS) and kind.',
  labelNames: ['model', 'kind'] as const,
  registers: [workerMetrics],
});

export const modelCredits = new Counter({
  name: 'agent_model_credits_total',
  help: "Credits charged for model calls, by model, at the model's price.",
  labelNames: ['model'] as const,
  registers: [workerMetrics],
});

/** One provider run of a tool call attempt; outcome: succeeded, failed or cancelled. */
export const toolCallDuration = new Histogram({
  name: 'agent_tool_call_duration_seconds',
  help: 'Time one tool call attempt took at its provider, by tool and outcome.',
  labelNames: ['tool', 'outcome'] as const,
  buckets: SECONDS,
  registers: [workerMetrics],
});

/** Outcome: delivered (a 2xx), http_error (any other status) or network_error (no answer). */
export const webhookAttempts = new Counter({
  name: 'agent_webhook_attempts_total',
  help: 'Webhook POST attempts, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [workerMetrics],
});

/** Outcome: delivered, or failed once every attempt of its series was spent. */
export const webhookDeliveries = new Counter({
  name: 'agent_webhook_deliveries_total',
  help: 'Webhook deliveries settled, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [workerMetrics],
});
