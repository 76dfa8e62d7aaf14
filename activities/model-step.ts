import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { selectMessagesToSummarise, saveChatSummary } from '../core/chats/summary';
import type { Config } from '../core/config/config';
import { storableJson, storableText } from '../core/db/storable';
import { FAILURE_TYPES, permanentFailure } from '../core/errors/failures';
import { modelCredits, modelStepDuration, modelTokens } from '../core/metrics/worker';
import type { OfferedModel } from '../core/model/catalog';
import { callModel, isRateLimited, type ModelCall } from '../core/model/complete';
import {
  assemble,
  planContext,
  summaryMaxTokens,
  toModelMessage,
  type ContextInput,
  type PlacedMessage,
} from '../core/model/context';
import { guardedDownload } from '../core/model/download';
import { messageTokens, summaryRequest, SUMMARY_INSTRUCTIONS } from '../core/model/prompt';
import { estimateTokens } from '../core/model/tokens';
import type { ModelMessage, ModelReply, ModelToolSpec } from '../core/model/types';
import {
  chargeModelCall,
  recordFreeModelCall,
  releaseModelCall,
  reserveModelCall,
  type ModelCallKind,
} from '../core/runs/model-calls';
import {
  setRunRetryWait,
  writeRunText,
  type StepContext,
  type StoredRunSettings,
  type StoredSummary,
} from '../core/runs/store';
import { operatorSettings } from '../core/runs/settings';
import { refreshContentBlocks } from '../core/storage/signing';
import { MODEL_STEP } from '../workflows/activity-options';
import type { ActivityDeps } from './deps';
import { isRetry, nextAttempt } from './retry-wait';

/** Partial text reaches the snapshot at most this often, however fast the model streams. */
const TEXT_WRITE_INTERVAL_MS = 250;
const HEARTBEAT_EVERY_MS = 1_000;
/** Messages a compaction reads at once, oldest first, to take into the summary. */
const SUMMARY_READ_LIMIT = 500;

/** Who pays for a step's model calls, and the budget they are held to. */
export interface StepPayer {
  runId: string;
  userId: string;
  step: number;
  /** The run's budget, in credits; null without one. */
  maxCredits: string | null;
}

/**
 * A run's settings as it uses them: what admission stored, or the operator's for a run admitted
 * before settings existed; never more steps than the operator's cap allows now.
 */
export function runSettings(config: Config, stored: StoredRunSettings | null): StoredRunSettings {
  const settings = stored ?? operatorSettings(config);
  return { ...settings, maxSteps: Math.min(settings.maxSteps, config.AGENT_MAX_STEPS) };
}

/** The model a run's settings name (the operator's default when none): failing for good when not offered. */
export function offeredModel(deps: ActivityDeps, name: string | null): OfferedModel {
  const chosen = name ?? deps.models.defaultModel;
  const model = chosen === undefined ? undefined : deps.models.get(chosen);
  if (!model) {
    throw permanentFailure(
      'PROVIDER_NOT_CONFIGURED',
      chosen === undefined ? 'No model provider is configured.' : `The model "${chosen}" is not offered.`,
    );
  }
  return model;
}

/**
 * The credits a call may cost at most, reserved before it: its estimated input and its longest
 * reply at the model's price, rounded up to the ledger's 4 places.
 */
export function reservationFor(model: OfferedModel, inputTokens: number, outputTokens: number): string {
  const perMillion = inputTokens * Number(model.price.input) + outputTokens * Number(model.price.output);
  return (Math.ceil(perMillion / 100) / 10_000).toFixed(4);
}

/**
 * One model call of a step, paid for: its price reserved (failing the run with
 * INSUFFICIENT_CREDITS, or BUDGET_EXCEEDED, before the model is called when it cannot be), the
 * call made, and its tokens charged at the model's price. A call that fails for good gives its
 * reservation back; one Temporal will retry keeps it for the retry, whose gate gives it back. A
 * model that costs nothing reserves nothing: its call is recorded once made.
 */
async function paidModelCall(
  deps: ActivityDeps,
  payer: StepPayer,
  kind: ModelCallKind,
  call: Omit<ModelCall, 'idleTimeoutMs' | 'download'> & { inputTokens: number },
): Promise<ModelReply> {
  const { model } = call;
  if (isRetry()) await setRunRetryWait(deps.db.pool, payer.runId, null);
  const free = [model.price.input, model.price.output, model.price.cachedInput].every((p) => Number(p) === 0);
  const amount = reservationFor(model, call.inputTokens, call.maxOutputTokens);
  const reserved = free
    ? ({ outcome: 'free' } as const)
    : await reserveModelCall(deps.db.pool, {
        runId: payer.runId,
        userId: payer.userId,
        step: payer.step,
        kind,
        model: model.name,
        amount,
        maxCredits: payer.maxCredits,
      });
  if (reserved.outcome === 'charged') return reserved.reply;
  if (reserved.outcome === 'no-credits') {
    throw permanentFailure(
      'INSUFFICIENT_CREDITS',
      `The credit balance cannot pay for the next model call (up to ${trim(amount)} credits at the price of ${model.name}).`,
    );
  }
  if (reserved.outcome === 'over-budget') {
    throw permanentFailure(
      'BUDGET_EXCEEDED',
      `The run's budget of ${payer.maxCredits} credits (maxCredits) would be exceeded: it has spent ${reserved.spent}, and its next model call may cost up to ${trim(amount)}.`,
    );
  }
  const provider = model.language.provider.split('.')[0] ?? model.provider;
  const stopTimer = modelStepDuration.startTimer({ provider, model: model.name });
  let result;
  try {
    result = await callModel({
      ...call,
      idleTimeoutMs: deps.config.MODEL_TIMEOUT,
      download: guardedDownload(deps.http, deps.config),
    });
    stopTimer({ outcome: 'ok' });
  } catch (err) {
    stopTimer({ outcome: call.signal.aborted ? 'cancelled' : 'error' });
    const failure = lastAttempt(err);
    const given = call.signal.aborted || (failure instanceof ApplicationFailure && failure.nonRetryable);
    if (given && reserved.outcome === 'reserved') await releaseModelCall(deps.db.pool, reserved.id);
    // The run's snapshot says why it is not moving until the next attempt.
    const next = given ? undefined : nextAttempt(MODEL_STEP.retry, failure);
    if (next) {
      await setRunRetryWait(deps.db.pool, payer.runId, {
        kind: 'provider_retry',
        reason: isRateLimited(failure) ? 'rate_limited' : 'provider_error',
        ...next,
      });
    }
    throw failure;
  }
  // A model may answer what PostgreSQL cannot store (a NUL); a run that could not record its
  // reply would retry its bookkeeping for ever.
  const reply = storableJson(result.reply);
  const stored = kind === 'reply' ? { reply } : {};
  let credits: string | null = '0';
  if (reserved.outcome === 'free') {
    await recordFreeModelCall(deps.db.pool, {
      ...payer,
      kind,
      model: model.name,
      usage: result.usage,
      ...stored,
    });
  } else {
    credits = await chargeModelCall(deps.db.pool, {
      id: reserved.id,
      usage: result.usage,
      price: model.price,
      capAtReservation: payer.maxCredits !== null,
      ...stored,
    });
  }
  modelTokens.inc({ model: model.name, kind: 'input' }, result.usage.inputTokens);
  modelTokens.inc({ model: model.name, kind: 'output' }, result.usage.outputTokens);
  modelTokens.inc({ model: model.name, kind: 'cached_input' }, result.usage.cachedInputTokens);
  if (credits !== null) modelCredits.inc({ model: model.name }, Number(credits));
  return reply;
}

/**
 * A retryable failure on the step's last attempt becomes a permanent one that says what failed,
 * so the run ends with it rather than with the generic error spent retries give.
 */
function lastAttempt(err: unknown): unknown {
  const info = Context.current().info;
  const last = info.attempt >= MODEL_STEP.retry.maximumAttempts;
  if (!last || !(err instanceof ApplicationFailure) || err.nonRetryable) return err;
  return permanentFailure(
    FAILURE_TYPES.PROVIDER_ERROR,
    `The model provider failed ${info.attempt} times in a row: ${err.message}`,
    err.details?.map(String).join('; '),
  );
}

function trim(credits: string): string {
  return String(Number(credits));
}

/**
 * The step's context, built to its model's window (core/model/context.ts): when the chat has more
 * than fits, its summary is extended first (compact), then the context is made again with it.
 */
export async function buildContext(
  deps: ActivityDeps,
  input: {
    payer: StepPayer;
    model: OfferedModel;
    instructions: string;
    tools: readonly ModelToolSpec[];
    context: StepContext;
    turn: readonly ModelMessage[];
    signal: AbortSignal;
  },
): Promise<{ system: string; messages: ModelMessage[]; inputTokens: number }> {
  const { model, context } = input;
  const history: PlacedMessage[] = context.history.map((m) => ({
    id: m.id,
    createdAt: m.createdAt,
    // Stored URLs may have expired; the model (and the tools it calls) get working ones.
    message: toModelMessage(m.role, refreshContentBlocks(deps.config, m.contentBlocks, input.payer.userId)),
  }));
  const base: ContextInput = {
    instructions: input.instructions,
    tools: input.tools,
    summary: context.summary?.summary ?? null,
    history,
    historyComplete: context.historyComplete,
    turn: input.turn,
    contextWindow: model.contextWindow,
    maxOutputTokens: model.maxOutputTokens,
  };
  let plan = planContext(base);
  if (plan.kind === 'compact') {
    const summary = await compact(deps, {
      payer: input.payer,
      model,
      chatId: context.chatId,
      summary: context.summary,
      before: plan.before,
      signal: input.signal,
    });
    const again = {
      ...base,
      summary: summary?.summary ?? null,
      history: [...plan.keep, ...history.slice(-1)],
      historyComplete: true,
    };
    plan = planContext(again);
    if (plan.kind === 'compact') plan = assemble(again);
  }
  if (plan.kind === 'too-long') {
    throw permanentFailure(
      FAILURE_TYPES.PROVIDER_ERROR,
      `The turn does not fit the context window of ${model.name} (about ${plan.tokens} tokens with its reply, of ${model.contextWindow}).`,
    );
  }
  return plan;
}

/**
 * Extends the chat's summary over every message after it and before `before`, in stretches that
 * fit the window beside the summary so far, each summary stored as soon as it is written: a step
 * retried mid-way goes on from the last one, and the chat's later turns reuse it.
 */
async function compact(
  deps: ActivityDeps,
  input: {
    payer: StepPayer;
    model: OfferedModel;
    chatId: string;
    summary: StoredSummary | null;
    before: { createdAt: string; id: string };
    signal: AbortSignal;
  },
): Promise<StoredSummary | null> {
  const { model } = input;
  const longest = summaryMaxTokens(model.contextWindow);
  // The request holds the instructions, the summary so far (at most `longest`) and the stretch.
  const room = model.contextWindow - longest * 2 - estimateTokens(SUMMARY_INSTRUCTIONS) - 64;
  let current = input.summary;
  for (;;) {
    const rows = await selectMessagesToSummarise(deps.db.pool, {
      chatId: input.chatId,
      after: current ? { createdAt: current.throughCreatedAt, id: current.throughMessageId } : null,
      before: input.before,
      limit: SUMMARY_READ_LIMIT,
    });
    if (rows.length === 0) return current;
    const stretch: { row: (typeof rows)[number]; message: ModelMessage }[] = [];
    let tokens = 0;
    for (const row of rows) {
      const message = toModelMessage(
        row.role,
        refreshContentBlocks(deps.config, row.contentBlocks, input.payer.userId),
      );
      const t = messageTokens(message);
      if (stretch.length > 0 && tokens + t > room) break;
      stretch.push({ row, message });
      tokens += t;
    }
    const text = summaryRequest(
      current?.summary ?? null,
      stretch.map((s) => s.message),
    );
    const reply = await paidModelCall(deps, input.payer, 'summary', {
      model,
      system: SUMMARY_INSTRUCTIONS,
      messages: [{ role: 'user', text, media: [] }],
      tools: [],
      signal: input.signal,
      maxOutputTokens: longest,
      inputTokens: estimateTokens(SUMMARY_INSTRUCTIONS + text),
      summary: true,
    });
    const last = stretch[stretch.length - 1]?.row;
    if (!last) return current;
    current = await saveChatSummary(deps.db.pool, {
      chatId: input.chatId,
      summary: storableText(reply.text.trim()) || 'Nothing of note was said.',
      through: { createdAt: last.createdAt, id: last.id },
      messages: (current?.messages ?? 0) + stretch.length,
    });
  }
}

/**
 * Streams the step's reply, writing `prefix` + the text so far into the run at most every 250 ms
 * (and once more at the end). An activity heartbeats throughout so Temporal's cancel reaches it;
 * `stop` ends the call too (a local activity's own cancel comes late, see agentStep). A reply an
 * earlier attempt of the step was charged for (`charged`) is not asked for again.
 */
export async function streamModelReply(
  deps: ActivityDeps,
  input: {
    payer: StepPayer;
    prefix: string;
    model: OfferedModel;
    system: string;
    messages: ModelMessage[];
    tools: readonly ModelToolSpec[];
    inputTokens: number;
    charged: ModelReply | null;
    /** Whether the whole reply is written once it is in. */
    writeLast: (reply: ModelReply) => boolean;
    stop?: AbortSignal;
  },
): Promise<ModelReply> {
  const ctx = Context.current();
  const signal = input.stop ? AbortSignal.any([ctx.cancellationSignal, input.stop]) : ctx.cancellationSignal;
  const { runId, step } = input.payer;
  let streamed = '';
  let lastWrite = Date.now();
  let trailing: NodeJS.Timeout | undefined;
  let writing: Promise<unknown> = Promise.resolve();
  const flush = () => {
    clearTimeout(trailing);
    trailing = undefined;
    lastWrite = Date.now();
    // A lone surrogate at the end is half of a character the next piece completes.
    const text = storableText(input.prefix + streamed);
    // The partial text is bookkeeping (core/db/client.ts): a write that fails (no connection in
    // time on a busy database) is passed over, since the step's ending writes the whole text.
    // Left to reject, it would go unhandled until the step ends, and that ends the worker process.
    writing = writing
      .then(() => writeRunText(deps.db.bookkeeping, { runId, text, step }))
      .catch((err: unknown) =>
        deps.logger.warn({ runId, step, err: (err as Error).message }, 'partial text not written'),
      );
  };
  // At most one write per interval, counted from the call's start, and the last piece of a burst
  // is never left unwritten: a reply that is whole within the first interval (a short one, a
  // provider that does not stream, a busy worker's local model) is written once, by the statement
  // that ends the step, not twice.
  const onText = (delta: string) => {
    streamed += delta;
    trailing ??= setTimeout(flush, Math.max(0, lastWrite + TEXT_WRITE_INTERVAL_MS - Date.now()));
  };
  // Heartbeats carry cancellation to an activity, so they go on while the model is silent too.
  const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    const reply =
      input.charged ??
      (await paidModelCall(deps, input.payer, 'reply', {
        model: input.model,
        system: input.system,
        messages: input.messages,
        tools: input.tools,
        onText,
        signal,
        maxOutputTokens: input.model.maxOutputTokens,
        inputTokens: input.inputTokens,
      }));
    if (input.writeLast(reply)) {
      streamed = reply.text;
      flush();
    }
    return reply;
  } finally {
    clearInterval(beat);
    clearTimeout(trailing);
    await writing;
  }
}
