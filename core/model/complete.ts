import {
  APICallError,
  RetryError,
  jsonSchema,
  streamText,
  tool,
  type Experimental_DownloadFunction as DownloadFunction,
} from 'ai';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES, permanentFailure } from '../errors/failures';
import type { OfferedModel } from './catalog';
import { SUMMARY_PROVIDER_OPTION, toSdkMessages } from './prompt';
import type { ModelMessage, ModelReply, ModelToolCall, ModelToolSpec, ModelUsage } from './types';

export interface ModelCall {
  model: OfferedModel;
  /** The system prompt: the run's instructions, and its chat's summary when it has one. */
  system: string;
  messages: readonly ModelMessage[];
  tools: readonly ModelToolSpec[];
  /** Called with each piece of text as it streams in. */
  onText?: (delta: string) => void;
  signal: AbortSignal;
  /** The longest the call may go without a piece (MODEL_TIMEOUT): a stalled call is cut and retried. */
  idleTimeoutMs: number;
  /** Fetches an image for a provider that cannot take its URL (complete.ts, guardedDownload). */
  download: DownloadFunction;
  maxOutputTokens: number;
  /** A compaction call: the local model answers it with a summary. */
  summary?: boolean;
}

export interface ModelCallResult {
  reply: ModelReply;
  usage: ModelUsage;
}

/**
 * The failure `type` of a model call worth trying again (a 429, a 5xx, a stream cut or stalled):
 * retryable, and never shown to a user (workflows/failures.ts shows non-retryable types only).
 */
export const MODEL_RETRYABLE = 'MODEL_RETRYABLE';
/** The longest a provider's `retry-after` is honoured for; a longer one waits this long. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * One model call through the AI SDK, for every provider alike: its text streamed to `onText`, its
 * tool calls (which the workflow runs, so the SDK is given none to execute), and its usage as the
 * provider counted it. Retries are Temporal's: the SDK makes one attempt, and a failure comes out
 * typed (see classify): retryable with the provider's `retry-after`, or permanent with a message
 * a user may read.
 */
export async function callModel(call: ModelCall): Promise<ModelCallResult> {
  const { model } = call;
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  let usage: ModelUsage | undefined;
  // The provider may go silent before its answer's headers as well as between its pieces: every
  // piece, or the call's start, gives it idleTimeoutMs more.
  const idle = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const awake = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(new Error('The model provider went silent.')), call.idleTimeoutMs);
  };
  awake();
  try {
    const result = streamText({
      model: model.language,
      system: call.system,
      messages: toSdkMessages(call.messages),
      ...(call.tools.length
        ? {
            tools: Object.fromEntries(
              call.tools.map((t) => [
                t.name,
                tool({ description: t.description, inputSchema: jsonSchema(t.parameters) }),
              ]),
            ),
          }
        : {}),
      maxOutputTokens: call.maxOutputTokens,
      maxRetries: 0,
      abortSignal: AbortSignal.any([call.signal, idle.signal]),
      experimental_download: call.download,
      // Errors come out of the stream below; the SDK's default would print each to the console.
      onError: () => undefined,
      ...(call.summary ? { providerOptions: { local: { [SUMMARY_PROVIDER_OPTION]: true } } } : {}),
    });
    for await (const part of result.fullStream) {
      awake();
      switch (part.type) {
        case 'text-delta':
          text += part.text;
          call.onText?.(part.text);
          break;
        case 'tool-call':
          toolCalls.push({
            id: part.toolCallId,
            toolName: part.toolName,
            // Malformed arguments reach the tool as they are; its schema refuses them clearly. (A
            // call of a tool not offered is invalid too, with its arguments parsed: the run refuses it.)
            input:
              part.invalid && typeof part.input === 'string'
                ? { malformed_arguments: part.input }
                : part.input,
          });
          break;
        case 'finish':
          usage = usageOf(part.totalUsage);
          break;
        case 'error':
          throw part.error;
        case 'abort':
          throw call.signal.reason ?? idle.signal.reason ?? new Error('The model call was cancelled.');
        default:
          break;
      }
    }
  } catch (err) {
    if (idle.signal.aborted && !call.signal.aborted) {
      throw ApplicationFailure.create({
        type: MODEL_RETRYABLE,
        message: `The model provider sent nothing for ${call.idleTimeoutMs / 1000} s (MODEL_TIMEOUT).`,
      });
    }
    throw classify(err, call.signal);
  } finally {
    clearTimeout(timer);
  }
  return {
    reply: { text, toolCalls },
    usage: usage ?? { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
  };
}

function usageOf(u: {
  inputTokens: number | undefined;
  outputTokens: number | undefined;
  inputTokenDetails: { cacheReadTokens: number | undefined };
}): ModelUsage {
  return {
    inputTokens: u.inputTokens ?? 0,
    outputTokens: u.outputTokens ?? 0,
    cachedInputTokens: u.inputTokenDetails.cacheReadTokens ?? 0,
  };
}

const CONTEXT_TOO_LONG =
  /context[ _-]?(length|window)|too many tokens|prompt is too long|exceeds the maximum number of tokens|maximum context|input is too long|token limit/i;

/**
 * What a failed call means for the step. A cancel stays what it is. 429, 408, 409, 5xx (529
 * included), a cut or stalled stream and anything unexpected are retryable, a 429 after its
 * `retry-after`; a 4xx is permanent, with a message that says which: the key, the context window,
 * or the request. The provider's own words stay in the failure's details, for operators.
 */
export function classify(err: unknown, signal: AbortSignal): Error {
  if (signal.aborted) return err instanceof Error ? err : new Error(String(err));
  // Ours already (a guarded download's failure), however deep the SDK wrapped it.
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e instanceof ApplicationFailure) return e;
  const cause = RetryError.isInstance(err) ? err.lastError : err;
  // A stream cut after its 200 is an APICallError too, with that 200: it is retried as below.
  if (APICallError.isInstance(cause) && cause.statusCode !== undefined && cause.statusCode >= 400) {
    const status = cause.statusCode;
    const detail = `${status}: ${cause.responseBody?.slice(0, 2_000) ?? cause.message}`;
    if (status === 429 || status === 408 || status === 409 || status >= 500) {
      return ApplicationFailure.create({
        type: MODEL_RETRYABLE,
        message: `The model provider answered ${status}.`,
        nextRetryDelay: status === 429 ? retryAfterMs(cause.responseHeaders) : undefined,
        details: [detail],
      });
    }
    if (status === 401 || status === 403) {
      return permanentFailure(
        FAILURE_TYPES.PROVIDER_ERROR,
        `The model provider refused the service's API key (${status}); the operator must fix its configuration.`,
        detail,
      );
    }
    if (CONTEXT_TOO_LONG.test(`${cause.message} ${cause.responseBody ?? ''}`)) {
      return permanentFailure(
        FAILURE_TYPES.PROVIDER_ERROR,
        "The conversation does not fit the model's context window, even with its older turns summarised.",
        detail,
      );
    }
    return permanentFailure(
      FAILURE_TYPES.PROVIDER_ERROR,
      `The model provider refused the request (${status}).`,
      detail,
    );
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return ApplicationFailure.create({
    type: MODEL_RETRYABLE,
    message: 'The model call failed before its reply was whole.',
    details: [message.slice(0, 2_000)],
  });
}

/** Whether a retryable failure of classify's is the provider's rate limit (a 429). */
export function isRateLimited(failure: unknown): boolean {
  return failure instanceof ApplicationFailure && String(failure.details?.[0] ?? '').startsWith('429:');
}

/** `retry-after-ms`, else `retry-after` (seconds or an HTTP date), at most a minute; undefined without one. */
function retryAfterMs(headers: Record<string, string> | undefined): number | undefined {
  const h = Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(h['retry-after-ms']);
  let wait: number | undefined = Number.isFinite(ms) && ms > 0 ? ms : undefined;
  const after = h['retry-after'];
  if (wait === undefined && after !== undefined) {
    const seconds = Number(after);
    wait = Number.isFinite(seconds) ? seconds * 1_000 : Date.parse(after) - Date.now();
  }
  if (wait === undefined || !Number.isFinite(wait) || wait <= 0) return undefined;
  return Math.min(Math.ceil(wait), MAX_RETRY_AFTER_MS);
}
