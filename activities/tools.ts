import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { AppError } from '../core/errors/app-error';
import { isFailureType, permanentFailure } from '../core/errors/failures';
import { toolCallDuration } from '../core/metrics/worker';
import { faultPoint } from '../core/process/fault';
import type { ToolResult } from '../core/schemas/events';
import {
  markToolCallFailed,
  openToolCall,
  readToolCall,
  recordToolSuccess,
  type StoredToolCall,
} from '../core/tools/calls';
import { runProvider } from '../core/tools/providers';
import { isToolName, TOOLS, type ToolName } from '../core/tools/registry';
import { stoppedByCaller, type ProviderProgress, type RunToolInput } from '../core/tools/types';
import { setRunRetryWait } from '../core/runs/store';
import { TOOL_CALL } from '../workflows/activity-options';
import type { ActivityDeps } from './deps';
import { isRetry, nextAttempt } from './retry-wait';

/**
 * Local providers report no progress of their own; this keeps their heartbeats flowing. A cancel
 * (the route's timeout, the run's end) arrives with a heartbeat's answer, so they go out as often
 * as the worker's throttle (2 s) sends them: ffmpeg is stopped within seconds, not a minute later.
 */
const HEARTBEAT_INTERVAL_MS = 1_000;

export type { RunToolInput } from '../core/tools/types';

export function createToolsActivities(deps: ActivityDeps) {
  const { pool } = deps.db;

  /**
   * Runs the provider and records the success: the result as the row holds it, or undefined when
   * the call had stopped RUNNING meanwhile (another attempt finished it, or its run, or its route's
   * timeout, ended it). The provider's failure is thrown as it came.
   */
  const runAndRecord = async (
    input: RunToolInput,
    toolName: ToolName,
    ctx: Context,
    heartbeat: (details?: ProviderProgress) => void,
    previous: ProviderProgress | undefined,
  ): Promise<ToolResult | undefined> => {
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
        signal: ctx.cancellationSignal,
        heartbeat,
        previous,
      });
    } catch (err) {
      stopTimer({ outcome: ctx.cancellationSignal.aborted ? 'cancelled' : 'failed' });
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
    const recorded = await recordToolSuccess(pool, {
      toolCallId: input.toolCallId,
      userId: input.userId,
      result,
    });
    if (!recorded) return undefined;
    await deps.startDeliveries(recorded.deliveries);
    await faultPoint(deps.config, 'tool-recorded', { toolCallId: input.toolCallId });
    return recorded.result;
  };

  return {
    /**
     * Runs one tool call to its result, at most one charge however often it is retried: the row is
     * created once, a call already SUCCEEDED answers its stored result, and the result, the charge
     * and the tool.completed event are one statement, the charge keyed by the call.
     */
    async runTool(input: RunToolInput): Promise<ToolResult> {
      const ctx = Context.current();
      const opened = await openToolCall(pool, {
        ...input,
        price: isToolName(input.toolName) ? TOOLS[input.toolName].price(deps.config) : '0',
        maxActive: deps.config.MAX_ACTIVE_TOOL_CALLS_PER_USER,
      });
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
      // Retryable: the call waits, by the activity's retries, for one of the user's calls to end;
      // its run's snapshot says so meanwhile.
      if (opened.outcome === 'at-cap') {
        const failure = ApplicationFailure.create({
          type: 'ACTIVE_LIMIT',
          message: 'Too many tool calls of this user are running; retry when one has finished.',
        });
        const next = nextAttempt(TOOL_CALL.retry, failure);
        if (input.runId && next)
          await setRunRetryWait(pool, input.runId, { kind: 'tool_slot', toolName: input.toolName, ...next });
        throw failure;
      }
      if (input.runId && isRetry()) await setRunRetryWait(pool, input.runId, null);
      const existing = opened.call;
      if (existing.status === 'SUCCEEDED' && existing.result) return existing.result;
      // Failed by another attempt, or settled by its route when its window ended.
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
        recorded = await runAndRecord(input, input.toolName, ctx, heartbeat, progress);
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
      // Another attempt finished first, or the call was ended meanwhile: the row has the word.
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

export type ToolsActivities = ReturnType<typeof createToolsActivities>;
