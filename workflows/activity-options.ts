import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';

/**
 * Every activity's timeouts and retries, in one place, named by what they protect. Each number
 * says why it is what it is; a workflow picks one of these and never writes its own.
 */

/**
 * One model step: the model streams for up to a few minutes (MODEL_TIMEOUT bounds one request).
 * Heartbeats go out every second while the model is silent too, so a worker that died mid-stream
 * is noticed in 30 s rather than after 5 minutes, and a cancel reaches the step within ~2 s
 * (the worker's heartbeat throttle). Four attempts ride out a provider's brief 429s and 5xx.
 */
export const MODEL_STEP = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 4,
  },
} as const satisfies ActivityOptions;

/**
 * A model step, as a local activity: it runs inside the workflow task that asked for it, so a plain
 * turn costs Temporal one workflow task and no activity task. What that gives up: while the step
 * runs its workflow task stays open, and the worker keeps it alive every 8 s (80 % of the 10 s task
 * timeout), so a Temporal cancel, a signal or a query reaches the workflow at the step's end or at
 * the next of those beats. A cancel reaches the step sooner another way: the statement recording it
 * notifies the worker, which stops the model call at once (activities/agent.ts). A worker that dies
 * mid-step is noticed when its workflow task times out (10 s, sooner than MODEL_STEP's 30 s
 * heartbeat timeout), and the step runs again on another; one asked to stop hands the step over, as
 * a MODEL_STEP activity, when its grace ends (agentStep). MODEL_STEP's time and retries: every wait
 * between attempts (at most 30 s) is under the SDK's local retry threshold (1 minute), so the
 * attempts run in the worker without a timer in the history. The SDK leaves each failed attempt's
 * 5-minute timer running (sdk-rust #1454), and one firing during a later attempt cuts it short; with
 * MODEL_TIMEOUT at its 60 s, all four attempts and their waits (about 254 s) end before that.
 */
export const MODEL_STEP_LOCAL = {
  startToCloseTimeout: MODEL_STEP.startToCloseTimeout,
  retry: MODEL_STEP.retry,
} as const satisfies LocalActivityOptions;

/**
 * One tool call: providers are polled for up to five minutes (the blocking route's window), and a
 * stalled attempt is noticed by its heartbeats. Permanent failures (bad input, a provider's 4xx,
 * a failed job) are non-retryable by type, so the five attempts only ever meet transient ones.
 */
export const TOOL_CALL = {
  startToCloseTimeout: '6 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
  },
} as const satisfies ActivityOptions;

/**
 * A tool call that runs on the worker's own CPU in moments (crop_image, with sharp: a few seconds
 * for the largest input), as a local activity: no trip through the task queue and no history
 * events beyond one marker. A local activity cannot heartbeat and holds its workflow task while it
 * runs, so a cancel or query reaches the workflow only when it ends; that is why only work this
 * short runs this way. A worker that dies or freezes mid-call is noticed when its workflow task
 * times out (10 s), and another worker runs the call again from its start (the call's row takes one
 * success, so it is charged once). The minute bounds one attempt: the image's fetch (FETCH_TIMEOUT,
 * 30 s) and the crop, with nothing waited for before them, so a slow or stopped attempt spends one
 * of TOOL_CALL's retries at most.
 */
export const LOCAL_TOOL_CALL = {
  startToCloseTimeout: '1 minute',
  retry: TOOL_CALL.retry,
} as const satisfies LocalActivityOptions;

/**
 * A run's bookkeeping (ending it, expiring its plan): one statement each, idempotent, so they run
 * as local activities (no task-queue round trip, no history events of their own beyond a marker)
 * and are retried until PostgreSQL answers; the run cannot end without them.
 */
export const RUN_BOOKKEEPING = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const satisfies LocalActivityOptions;

/**
 * One webhook POST as an activity task, with the spec's 10 s HTTP deadline inside it. The 60 s
 * around it is for our own database: an attempt waits out a PostgreSQL restart (seconds) instead of
 * spending one of the receiver's attempts on it (found by the chaos suite, issue 18). The attempt
 * heartbeats every second, so a worker killed mid-attempt is retried after 5 s, not 60.
 */
const WEBHOOK_POST = {
  startToCloseTimeout: '60 seconds',
  heartbeatTimeout: '5 seconds',
} as const satisfies ActivityOptions;

/**
 * A delivery's first attempt, as a local activity in the delivery's first workflow task, which the
 * worker that recorded the event gets with the start's answer (an eager start): a delivered event
 * costs Temporal one workflow task and no activity task. One attempt only, with WEBHOOK_POST's
 * time: a failed one is followed by WEBHOOK_RETRY's activity, so a receiver that is down never
 * holds a workflow task open while its series waits out the schedule.
 */
export const WEBHOOK_FIRST_POST = {
  startToCloseTimeout: WEBHOOK_POST.startToCloseTimeout,
  retry: { maximumAttempts: 1 },
} as const satisfies LocalActivityOptions;

/** The spec's first wait, after a failed first attempt: 1 s (a timer). */
export const WEBHOOK_SECOND_ATTEMPT_AFTER = '1 second';

/**
 * Attempts 2 to 4, one activity with the rest of the spec's schedule (4 attempts in all, waiting
 * 1 s, 5 s, then 15 s): 5 s, then 15 s apart (5 × 3 = 15).
 */
export const WEBHOOK_RETRY = {
  ...WEBHOOK_POST,
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 3,
    maximumInterval: '15 seconds',
    maximumAttempts: 3,
  },
} as const satisfies ActivityOptions;

/**
 * One-statement bookkeeping a workflow must not end without (a delivery marked FAILED after its
 * last attempt, a tool call closed when its workflow gives up): idempotent, retried until it lands.
 */
export const BOOKKEEPING = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const satisfies ActivityOptions;
