import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { AppError } from '../core/errors/app-error';
import { isFailureType, permanentFailure } from '../core/errors/failures';
import { toolCallDuration } from '../core/metrics/worker';
import { faultPoint } from '../core/process/fault';
import type { ToolResult } from '../core/schemas/events';
import { ANY_ID } from '../core/db/notification-hub';
import {
  holdToolCall,
  markToolCallFailed,
  openToolCall,
  parseToolOffer,
  readToolCall,
  recordToolSuccess,
  toolCallHeld,
  type HeardToolOffer,
  type Queryable,
  type StoredToolCall,
} from '../core/tools/calls';
import { runProvider } from '../core/tools/providers';
import { isToolName, TOOLS, type ToolName } from '../core/tools/registry';
import {
  stoppedByCaller,
  type ProviderProgress,
  type RunToolInput,
  type ToolContext,
} from '../core/tools/types';
import {
  DECLINED_WAKE_AFTER_MS,
  FIRST_ATTEMPT_WAIT_MS,
  OFFER_FRESH_MS,
  TOOL_FIRST_ATTEMPT_BUDGET_MS,
} from '../workflows/activity-options';
import { startDeliveries, starterOf, wakeToolCall } from '../workflows/client';
import type { ActivityDeps } from './deps';

/**
 * Local providers report no progress of their own; this keeps their heartbeats flowing. A cancel
 * (the route's timeout, the run's end) arrives with a heartbeat's answer, so they go out as often
 * as the worker's throttle (2 s) sends them: ffmpeg is stopped within seconds, not a minute later.
 */
const HEARTBEAT_INTERVAL_MS = 1_000;

export type { RunToolInput } from '../core/tools/types';

/** How often the workflow's attempt of an offered call asks whether a first attempt still holds it. */
const HELD_POLL_MS = 20;

/**
 * What runTool's attempts and the first attempts share: opening the call's row, and running its
 * provider to a recorded success.
 */
function toolAttempts(deps: ActivityDeps) {
  const { pool } = deps.db;
  const starter = starterOf(deps);
  return {
    open: (input: RunToolInput, db: Queryable = pool) =>
      openToolCall(db, {
        ...input,
        price: isToolName(input.toolName) ? TOOLS[input.toolName].price(deps.config) : '0',
        maxActive: deps.config.MAX_ACTIVE_TOOL_CALLS_PER_USER,
      }),

    /**
     * Runs the provider and records the success: the result as the row holds it, or undefined when
     * the call had stopped RUNNING meanwhile (another attempt finished it, or its run ended it).
     * The provider's failure is thrown as it came.
     */
    async run(
      input: RunToolInput,
      toolName: ToolName,
      attempt: Pick<ToolContext, 'signal' | 'heartbeat' | 'previous'>,
      db: Queryable = pool,
    ): Promise<ToolResult | undefined> {
      const started = Date.now();
      const stopTimer = toolCallDuration.startTimer({ tool: toolName });
      let outcome;
      try {
        outcome = await runProvider(toolName, input.input, {
          config: deps.config,
          db: deps.db,
          storage: deps.storage,
          http: deps.http,
          logger: deps.logger.child({ toolCallId: input.toolCallId, toolName }),
          userId: input.userId,
          toolCallId: input.toolCallId,
          ...attempt,
        });
      } catch (err) {
        stopTimer({ outcome: attempt.signal.aborted ? 'cancelled' : 'failed' });
        throw err;
      }
      stopTimer({ outcome: 'succeeded' });
      const result: ToolResult = {
        toolName,
        output: outcome.output,
        assets: outcome.assets,
        creditCost: TOOLS[toolName].price(deps.config),
        durationMs: Date.now() - started,
        providerRunId: outcome.providerRunId,
      };
      const recorded = await recordToolSuccess(db, {
        toolCallId: input.toolCallId,
        userId: input.userId,
        result,
      });
      if (!recorded) return undefined;
      await startDeliveries(starter, recorded.deliveries);
      await faultPoint(deps.config, 'tool-recorded', { toolCallId: input.toolCallId });
      return recorded.result;
    },
  };
}

export function createToolsActivities(deps: ActivityDeps) {
  const { pool } = deps.db;
  const attempts = toolAttempts(deps);

  /**
   * An offered call's first attempt may hold it: the workflow's attempt waits for it to end rather
   * than run the tool beside it, then finds the call as it left it (succeeded, failed for good, or
   * still RUNNING for this attempt to run). A first attempt that died with its worker lets go with
   * its connection; one whose worker froze may hold on until PostgreSQL notices, so the wait ends
   * past any first attempt's budget, and this attempt runs the call (a second success is refused by
   * the row, so the call is charged once whichever records first).
   */
  const waitForFirstAttempt = async (toolCallId: string, signal: AbortSignal): Promise<void> => {
    const giveUpAt = Date.now() + FIRST_ATTEMPT_WAIT_MS;
    let waited = false;
    while (Date.now() < giveUpAt && (await toolCallHeld(pool, toolCallId))) {
      if (!waited) deps.logger.debug({ toolCallId }, 'tool call waits for its first attempt');
      waited = true;
      await sleep(HELD_POLL_MS, undefined, { signal }).catch(() => undefined);
      signal.throwIfAborted();
    }
    // Cancelled while asking: nothing is opened, nor reserved, for a call its workflow gave up.
    signal.throwIfAborted();
  };

  return {
    /**
     * Runs one tool call to its result, at most one charge however often it is retried: the row is
     * created once, a call already SUCCEEDED answers its stored result, and the result, the charge
     * and the tool.completed event are one statement, the charge keyed by the call.
     */
    async runTool(input: RunToolInput): Promise<ToolResult> {
      const ctx = Context.current();
      if (input.offered) await waitForFirstAttempt(input.toolCallId, ctx.cancellationSignal);
      const opened = await attempts.open(input);
      if (opened.outcome === 'run-ended')
        throw permanentFailure('RUN_NOT_ACTIVE', 'The run has ended; the tool was not started.');
      if (opened.outcome === 'no-credits')
        throw permanentFailure('INSUFFICIENT_CREDITS', 'The credit balance cannot pay for this tool call.');
      if (opened.outcome === 'not-allowed')
        throw permanentFailure('UNKNOWN_TOOL', `The tool ${input.toolName} is not among this run's tools.`);
      if (opened.outcome === 'over-budget')
        throw permanentFailure(
          'BUDGET_EXCEEDED',
          opened.limit === 'maxToolCalls'
            ? `The run's budget of ${opened.budget} tool calls (maxToolCalls) is spent; ${input.toolName} was not started.`
            : `The run's budget of ${opened.budget} credits (maxCredits) cannot pay for ${input.toolName}; it was not started.`,
        );
      // Retryable: the call waits, by the activity's retries, for one of the user's calls to end.
      if (opened.outcome === 'at-cap')
        throw ApplicationFailure.create({
          type: 'ACTIVE_LIMIT',
          message: 'Too many tool calls of this user are running; retry when one has finished.',
        });
      const existing = opened.call;
      if (existing.status === 'SUCCEEDED' && existing.result) return existing.result;
      // Failed by another attempt (a first attempt, or one whose workflow did not hear of it).
      if (existing.status === 'FAILED') throw failedBefore(existing, 'The tool call failed.');
      if (!isToolName(input.toolName)) {
        const error = `There is no tool named ${input.toolName}.`;
        await markToolCallFailed(pool, input.toolCallId, error);
        throw permanentFailure('UNKNOWN_TOOL', error);
      }
      let progress = ctx.info.heartbeatDetails as ProviderProgress | undefined;
      // A local activity (a tool that runs in moments, LOCAL_TOOL_CALL) has no heartbeats to send.
      const heartbeat = (details?: ProviderProgress) => {
        if (details) progress = details;
        if (!ctx.info.isLocal) ctx.heartbeat(progress);
      };
      const timer = ctx.info.isLocal ? undefined : setInterval(() => heartbeat(), HEARTBEAT_INTERVAL_MS);
      let recorded;
      try {
        recorded = await attempts.run(input, input.toolName, {
          signal: ctx.cancellationSignal,
          heartbeat,
          previous: progress,
        });
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          // A worker stopping, or an attempt timed out, leaves the call for the next attempt.
          if (stoppedByCaller(ctx.cancellationSignal))
            await markToolCallFailed(pool, input.toolCallId, 'The tool call was cancelled.');
          throw ctx.cancellationSignal.reason;
        }
        const failure = asPermanent(err);
        if (failure instanceof ApplicationFailure && failure.nonRetryable) {
          await markToolCallFailed(pool, input.toolCallId, failure.message, failure.type);
        }
        throw failure;
      } finally {
        clearInterval(timer);
      }
      if (recorded) return recorded;
      // Another attempt finished first, or the run ended the call meanwhile: the row has the word.
      const now = await readToolCall(pool, input.toolCallId);
      if (now?.status === 'SUCCEEDED' && now.result) return now.result;
      throw failedBefore(now, 'The tool call ended before its result was recorded.');
    },

    /** Closes a call its workflow gave up on (retries spent, or cancelled); a finished call is left alone. */
    async markToolCallFailed({ toolCallId, error }: { toolCallId: string; error: string }): Promise<void> {
      await markToolCallFailed(pool, toolCallId, error);
    },
  };
}

/** A call another attempt failed, as this one fails: with that failure's type when it was kept. */
function failedBefore(call: StoredToolCall | undefined, otherwise: string): ApplicationFailure {
  const type = isFailureType(call?.errorCode) ? call.errorCode : 'PROVIDER_ERROR';
  return permanentFailure(type, call?.error ?? otherwise);
}

/** A provider's failure as an activity throws it: an AppError of a failure type is permanent. */
function asPermanent(err: unknown): unknown {
  return err instanceof AppError && isFailureType(err.code) ? permanentFailure(err.code, err.message) : err;
}

/** Takes the offers of quick tools' direct calls on a worker's queue (createWorker). */
export interface ToolFirstAttempts {
  /** Starts taking offers; one is taken only while `accepting` says so and a slot is free. */
  listen(accepting: () => boolean): void;
  /** Takes no more, and resolves once every attempt taken has ended. */
  close(): Promise<void>;
}

/**
 * The worker's first attempts of direct quick-tool calls (a crop): a gateway offers the call right
 * after starting its workflow with a head start (operations/tools.ts, FIRST_ATTEMPT_HEAD_START_MS),
 * and a worker of that workflow's queue runs it at once, rather than after the workflow's dispatch
 * and first activation (about 18 ms at p50 on 2 cores; bench, crop row). It holds the call
 * (core/tools/calls.ts holdToolCall) so the workflow's attempt waits for it, and opens the call's
 * row as any attempt does. It settles a success, or a failure no retry can mend (with its type,
 * which the workflow's attempt answers); anything else (a transient failure, a stop, its budget) it
 * lets go of, and the workflow's attempt runs the call as a retry would. A call whose row was opened
 * before (a retry, the workflow's attempt) is left to its workflow, and so is an offer heard after
 * OFFER_FRESH_MS or past the cap. Whatever it does not settle, it wakes the workflow for, so the
 * head start is waited out whole only when no one can wake it (FIRST_ATTEMPT_HEAD_START_MS). Each
 * attempt holds one of the pool's connections, on which its statements run:
 * WORKER_MAX_CONCURRENT_TOOL_FIRST_ATTEMPTS.
 */
export function createToolFirstAttempts(deps: ActivityDeps): ToolFirstAttempts {
  const { pool } = deps.db;
  const attempts = toolAttempts(deps);
  const starter = starterOf(deps);
  /** Every offer being handled, declined ones' wakes included (close waits for them). */
  const inFlight = new Set<Promise<void>>();
  /** The first attempts among them, running now: what the cap counts. */
  let running = 0;
  let unsubscribe: (() => void) | undefined;

  /**
   * One first attempt: `settled` when it recorded the call's success, `held` when another attempt
   * holds the call, `stale` when the offer came past OFFER_FRESH_MS (past its workflow's head start,
   * so the workflow runs, or has run, the call), `left` for everything else, which the workflow must
   * now run or answer.
   */
  const attempt = async (
    { offeredAt, offer: { call } }: HeardToolOffer,
    toolName: ToolName,
  ): Promise<'settled' | 'held' | 'stale' | 'left'> => {
    const signal = AbortSignal.any([deps.stopping, AbortSignal.timeout(TOOL_FIRST_ATTEMPT_BUDGET_MS)]);
    const hold = await holdToolCall(pool, {
      toolCallId: call.toolCallId,
      offeredAt,
      freshMs: OFFER_FRESH_MS,
    });
    if (hold === 'held' || hold === 'stale') return hold;
    try {
      if (signal.aborted || (await attempts.open(call, hold.client)).outcome !== 'opened') return 'left';
      try {
        const recorded = await attempts.run(
          call,
          toolName,
          { signal, heartbeat: () => undefined, previous: undefined },
          hold.client,
        );
        return recorded ? 'settled' : 'left';
      } catch (err) {
        const failure = asPermanent(err);
        // No retry can mend it: the call fails now, with its type, and is fetched no second time.
        if (!signal.aborted && failure instanceof ApplicationFailure && failure.nonRetryable) {
          await markToolCallFailed(hold.client, call.toolCallId, failure.message, failure.type);
          deps.logger.info(
            { toolCallId: call.toolCallId, err: failure },
            'first attempt failed the tool call',
          );
          return 'left';
        }
        throw err;
      }
    } finally {
      await hold.release();
    }
  };

  /**
   * The offer was declined (this worker's slots are full, or it is stopping): its workflow is woken
   * unless another worker took the call. Asked after DECLINED_WAKE_AFTER_MS, once any worker that
   * took it holds it: a held call, or one whose row is opened, has an attempt that settles it or
   * wakes the workflow itself.
   */
  const declined = async (call: RunToolInput): Promise<void> => {
    await sleep(DECLINED_WAKE_AFTER_MS);
    if ((await toolCallHeld(pool, call.toolCallId)) || (await readToolCall(pool, call.toolCallId))) return;
    await wakeToolCall(starter, call);
  };

  /**
   * Runs the offer in one of the worker's slots, which `ended` gives back as soon as the attempt
   * ends, and then wakes the workflow of a call the attempt left.
   */
  const take = async (heard: HeardToolOffer, toolName: ToolName, ended: () => void): Promise<void> => {
    const { call } = heard.offer;
    const outcome = await attempt(heard, toolName)
      .catch((err: unknown) => {
        deps.logger.warn(
          { toolCallId: call.toolCallId, err },
          'first attempt of a tool call ended in an error',
        );
        return 'left' as const;
      })
      .finally(ended);
    if (outcome === 'left') await wakeToolCall(starter, call);
  };

  return {
    listen(accepting) {
      if (unsubscribe) return;
      unsubscribe = deps.notifications.subscribe('tool_offers', ANY_ID, (payload) => {
        const heard = payload === undefined ? undefined : parseToolOffer(payload);
        if (!heard || heard.offer.taskQueue !== deps.config.TEMPORAL_TASK_QUEUE) return;
        const { call } = heard.offer;
        if (!isToolName(call.toolName)) return;
        const free = running < deps.config.WORKER_MAX_CONCURRENT_TOOL_FIRST_ATTEMPTS && accepting();
        if (free) running += 1;
        const handled = free ? take(heard, call.toolName, () => (running -= 1)) : declined(call);
        const done: Promise<void> = handled
          // Unwoken, the workflow still runs the call once its head start is out.
          .catch((err: unknown) =>
            deps.logger.warn({ toolCallId: call.toolCallId, err }, 'tool call workflow not woken'),
          )
          .finally(() => inFlight.delete(done));
        inFlight.add(done);
      });
    },
    async close() {
      unsubscribe?.();
      unsubscribe = undefined;
      while (inFlight.size) await Promise.all(inFlight);
    },
  };
}

export type ToolsActivities = ReturnType<typeof createToolsActivities>;
