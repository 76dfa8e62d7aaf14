import { randomUUID } from 'node:crypto';
import { addLogContext } from '../core/logging/context';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppError, type ErrorCode } from '../core/errors/app-error';
import { isFailureType } from '../core/errors/failures';
import { toolResultSchema, type ToolResult } from '../core/schemas/events';
import type { Config } from '../core/config/config';
import type { NotificationHub } from '../core/db/notification-hub';
import { abandonToolCall, readToolCall, selectToolAllowance } from '../core/tools/calls';
import { parseToolInput, TOOLS, type ToolName } from '../core/tools/registry';
import type { RunToolInput } from '../core/tools/types';
import { startToolCall, starterOf } from './temporal';
import { toolCallWorkflowId } from '../workflows/tool-call.contract';
import type { Caller, OperationDeps } from './deps';
import { idempotent, keyedId, type KeyUse } from './idempotency';
import { activeLimit } from './limits';

/**
 * What every tool call can be refused for: the user's balance, the user's calls running, and the
 * user's storage, which its output would take past MAX_STORED_BYTES_PER_USER.
 */
const ADMISSION_ERRORS: ErrorCode[] = ['INSUFFICIENT_CREDITS', 'ACTIVE_LIMIT', 'LIMIT_REACHED'];

/** The errors each tool can answer besides the common ones: the document lists them. */
export const TOOL_ERRORS: Record<ToolName, ErrorCode[]> = {
  crop_image: [
    ...ADMISSION_ERRORS,
    'INVALID_RECTANGLE',
    'ATTACHMENT_NOT_FOUND',
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
  ai_image_2: [
    ...ADMISSION_ERRORS,
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'PROVIDER_NOT_CONFIGURED',
    'TIMEOUT',
  ],
  merge_videos: [
    ...ADMISSION_ERRORS,
    'UNSUPPORTED_MEDIA_TYPE',
    'PAYLOAD_TOO_LARGE',
    'MEDIA_UNAVAILABLE',
    'PROVIDER_ERROR',
    'TIMEOUT',
  ],
};

export interface ToolRequest {
  name: ToolName;
  input: unknown;
}

/** The three media tools, called directly and blocking. */
export function createToolsOperations(deps: OperationDeps, hub: NotificationHub) {
  /**
   * The call's result as soon as its row records the success (the statement that does notifies
   * `tool_calls`), rather than once the workflow task that ran it completes and Temporal's long
   * poll of the history answers: a few ms of Temporal round trips off a crop. The row is the
   * result the workflow returns. A failure is left to the workflow's own answer, whose failure
   * type names the error; so is a call whose row settled before this listened (a retried key).
   */
  const succeeded = (toolCallId: string): { result: Promise<ToolResult>; stop: () => void } => {
    let stop!: () => void;
    const result = new Promise<ToolResult>((resolve) => {
      stop = hub.subscribe('tool_calls', toolCallId, () => {
        // A read that fails changes nothing: the workflow's result still answers.
        readToolCall(deps.db.pool, toolCallId).then(
          (call) => {
            if (call?.status === 'SUCCEEDED' && call.result) resolve(call.result);
          },
          () => undefined,
        );
      });
    });
    return { result, stop };
  };

  /**
   * A call whose route answers without its outcome (its window passed, or the wait broke) is
   * settled first: its row is ended FAILED, so nothing its attempts do afterwards is charged or
   * announced (a call that succeeded meanwhile answers its success instead), and then its workflow
   * is cancelled, so its provider job stops. The answer is then `failure`.
   */
  const abandon = async (call: RunToolInput, failure: unknown): Promise<ToolResult> => {
    const timedOut = failure instanceof AppError && failure.code === 'TIMEOUT';
    const settled = await abandonToolCall(deps.db.pool, {
      ...call,
      error: timedOut ? failure.message : 'The tool call was interrupted.',
      errorCode: timedOut ? 'TIMEOUT' : null,
    });
    if (settled?.status === 'SUCCEEDED' && settled.result) return toolResultSchema.parse(settled.result);
    await deps.temporal.client.workflow
      .getHandle(toolCallWorkflowId(call.toolCallId))
      .cancel()
      .catch((err: unknown) => deps.logger.warn({ err }, 'tool call cancel failed'));
    throw failure;
  };

  /**
   * Runs one tool call as its own workflow and waits for it within TOOL_ROUTE_TIMEOUT. Past the
   * window the call is abandoned (see `abandon`) and the answer is 504 TIMEOUT; a permanent failure
   * answers the error its type names; spent retries answer 502.
   */
  const callTool = async (
    caller: Caller,
    { name, input: rawInput }: ToolRequest,
    keyed?: KeyUse,
  ): Promise<ToolResult> => {
    const input = parseToolInput(name, rawInput);
    if (TOOLS[name].provider(deps.config) === 'none') {
      throw new AppError('PROVIDER_NOT_CONFIGURED', `No provider is configured for ${name}.`);
    }
    await refuseUnaffordable(deps, caller.userId, name);
    // A keyed call's id is named by the user and this use of the key: a retry whose first request's
    // gateway died before storing the answer joins that call's workflow, or finds its row settled,
    // and is not charged again.
    const toolCallId = keyed ? keyedId('callTool', caller.userId, keyed) : randomUUID();
    addLogContext({ toolCallId });
    const call: RunToolInput = { toolCallId, toolName: name, input, userId: caller.userId, via: caller.via };
    // Listening before the start, so the success cannot be recorded before anyone listens.
    const success = succeeded(toolCallId);
    const longPoll = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), deps.config.TOOL_ROUTE_TIMEOUT);
    });
    let outcome: ToolResult | 'timeout';
    try {
      const handle = await startToolCall(starterOf(deps), call);
      outcome = await Promise.race([
        deps.temporal.connection.withAbortSignal(longPoll.signal, () => handle.result()),
        success.result,
        timedOut,
      ]);
    } catch (err) {
      // The workflow's own failure: its row is settled already, by the attempt or the workflow.
      if (err instanceof WorkflowFailedError) throw toAppError(err, deps.config);
      // The start or the wait broke (Temporal unreachable): the call may be running all the same.
      return abandon(call, err);
    } finally {
      clearTimeout(timer);
      success.stop();
      // The row answered first: the history's long poll is not waited for.
      longPoll.abort();
    }
    if (outcome === 'timeout')
      return abandon(call, new AppError('TIMEOUT', 'The tool did not finish in time.'));
    // Both answers are the row's result; parsed, its fields come in the documented order.
    return toolResultSchema.parse(outcome);
  };
  return {
    /** Calls a tool, once per Idempotency-Key: a replay is never run, nor charged, again. */
    callTool: idempotent(deps, 'callTool', {
      fingerprint: (request: ToolRequest) => ({
        name: request.name,
        input: parseToolInput(request.name, request.input),
      }),
      run: callTool,
    }),
  };
}

export type ToolsOperations = ReturnType<typeof createToolsOperations>;

/**
 * The quick answer before a workflow starts: 402 when the balance cannot pay the price, 429 when
 * the user's calls are at their cap. The call's opening takes both for real (openToolCall), so a
 * call racing past this check is still refused there, or waits for a slot.
 */
async function refuseUnaffordable(deps: OperationDeps, userId: string, name: ToolName): Promise<void> {
  const allowance = await selectToolAllowance(deps.db.pool, userId, TOOLS[name].price(deps.config));
  if (!allowance) return;
  if (!allowance.canPay) {
    throw new AppError('INSUFFICIENT_CREDITS', 'The credit balance cannot pay for this tool call.');
  }
  const max = deps.config.MAX_ACTIVE_TOOL_CALLS_PER_USER;
  if (allowance.activeToolCalls >= max)
    throw activeLimit('MAX_ACTIVE_TOOL_CALLS_PER_USER', max, 'tool calls');
}

function toAppError(err: WorkflowFailedError, config: Config): AppError {
  let cause: unknown = err;
  while (cause instanceof Error) {
    // The failure the workflow ended with: a permanent one, or the last attempt's of a retried one.
    if (cause instanceof ApplicationFailure && cause.type === 'ACTIVE_LIMIT') {
      const max = config.MAX_ACTIVE_TOOL_CALLS_PER_USER;
      return activeLimit('MAX_ACTIVE_TOOL_CALLS_PER_USER', max, 'tool calls');
    }
    if (cause instanceof ApplicationFailure && isFailureType(cause.type))
      return new AppError(cause.type, cause.message);
    cause = cause.cause;
  }
  // Retries spent on transient failures: the provider kept failing.
  return new AppError('PROVIDER_ERROR', "The tool's provider failed.");
}
