import { randomBytes, randomUUID } from 'node:crypto';
import { AppError, ConflictError, NotFoundError, ValidationError } from '../../core/errors/app-error';
import { hostRefusal, NOT_PUBLIC_MESSAGE } from '../../core/net/public-url';
import { fileUrlOf } from '../../core/storage/signing';
import { addLogContext } from '../../core/logging/context';
import { runsAdmitted } from '../../core/metrics/registry';
import { retryOnConflict } from '../../core/db/client';
import {
  insertTurn,
  selectActiveRun,
  selectOwnAttachments,
  type RunSettingsInput,
  type TurnAdmission,
} from '../../core/runs/store';
import type { CancelledRun } from '../../core/runs/queue';
import { DEFAULT_CHAT_TITLE } from '../../core/schemas/chats';
import { currentTraceId } from '../../core/telemetry/tracing';
import { toActiveRun, type ContentBlock, type OnActiveRun, type RunMetadata } from '../../core/schemas/runs';
import type { PreparedAttachment } from '../../core/uploads/attachments';
import type { Caller, OperationDeps } from '../deps';
import { activeLimit } from '../limits';
import { RECENTLY_ENDED_SECONDS, type RunToStart } from './start';
import { offeredNames, operatorSettings } from '../../core/runs/settings';
import type { BudgetInput } from '../../core/schemas/agent';
import type { ToolName } from '../../core/tools/registry';

const TITLE_FROM_TEXT = 60;
export const PG_UNIQUE_VIOLATION = '23505';

export interface TurnRequest {
  userId: string;
  chatId?: string;
  text: string;
  imageUrls: string[];
  attachmentIds: string[];
  planMode: boolean;
  traceparent?: string;
  via: Caller['via'];
  /** The run's id when the send names it (a keyed send); a new one otherwise. */
  runId?: string;
  /** The send's metadata pairs (none when left out). */
  metadata?: RunMetadata;
  /** The send's own settings, each winning over the chat's default and the operator's. */
  settings?: SendSettings;
  budget?: BudgetInput;
  /** What the turn does when its chat has a run not yet terminal; `reject` unless given. */
  onActiveRun?: OnActiveRun;
}

/** A send's settings (core/schemas/agent), each optional. */
export interface SendSettings {
  model?: string;
  instructions?: string;
  maxSteps?: number;
  tools?: ToolName[];
}

/**
 * Refuses, before anything is written, what the document's schema cannot know: a model the
 * operator does not offer, more steps than the operator's cap. `at` is where the fields sit
 * (`body` for a send, for a chat's PATCH likewise), for the details' paths.
 */
export function assertOffered(
  config: OperationDeps['config'],
  settings: { model?: string | null; maxSteps?: number | null },
  at = 'body',
): void {
  const details = [];
  if (
    settings.model !== undefined &&
    settings.model !== null &&
    !config.models.entries.some((e) => e.name === settings.model)
  ) {
    details.push({
      path: `${at}.model`,
      message: `is not a model this service offers (offered: ${offeredNames(config)})`,
    });
  }
  if (
    settings.maxSteps !== undefined &&
    settings.maxSteps !== null &&
    settings.maxSteps > config.AGENT_MAX_STEPS
  ) {
    details.push({
      path: `${at}.maxSteps`,
      message: `must be at most ${config.AGENT_MAX_STEPS}, the operator's cap (AGENT_MAX_STEPS)`,
    });
  }
  if (details.length) throw new ValidationError(details);
}

/** What a send (or a regenerate) says of its run's settings, as admission's statements take it. */
export function runSettingsInput(
  config: OperationDeps['config'],
  request: { settings?: SendSettings; budget?: BudgetInput },
): RunSettingsInput {
  return {
    defaults: operatorSettings(config),
    settings: request.settings ?? {},
    maxStepsCap: config.AGENT_MAX_STEPS,
    budget: request.budget && Object.keys(request.budget).length ? request.budget : null,
  };
}

export interface AdmittedTurn {
  run: RunToStart;
  messageId: string;
  /** The chat's previous run's execution, when that run has only just ended (see startRun). */
  closingExecution: string | null;
  /** Its place in the chat's queue; null when it is the chat's run now (and is to be started). */
  queuePosition: number | null;
  /** The runs an interrupt cancelled: the caller ends the queued ones and tells the head's execution. */
  cancelled: CancelledRun[];
}

/**
 * The W3C trace id of the admitting request: with tracing on, the request span's (which continues
 * a valid `traceparent`, so the two agree); else from `traceparent` when valid, else new.
 */
export function traceIdOf(traceparent: string | undefined): string {
  const traced = currentTraceId();
  if (traced) return traced;
  const match = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(
    traceparent?.trim().toLowerCase() ?? '',
  );
  const id = match?.[1];
  return id && !/^0+$/.test(id) ? id : randomBytes(16).toString('hex');
}

export function defaultTitle(text: string): string {
  const title = text.trim().replace(/\s+/g, ' ').slice(0, TITLE_FROM_TEXT).trim();
  return title || DEFAULT_CHAT_TITLE;
}

function mediaKind(mimeType: string): 'image' | 'video' | 'audio' {
  if (mimeType.startsWith('video/')) return 'video';
  if (mimeType.startsWith('audio/')) return 'audio';
  return 'image';
}

/**
 * The 409 of a chat whose run is active names that run, with its open waitpoint and where to poll,
 * stream, cancel and decide it, so the client can follow it instead of guessing; undefined when the
 * run ended in the meantime.
 */
export async function runActiveError(deps: OperationDeps, userId: string, chatId: string) {
  const active = await selectActiveRun(deps.db.pool, userId, chatId);
  if (!active) return undefined;
  return new AppError('RUN_ACTIVE', 'A run of this chat is still active.', undefined, undefined, {
    activeRun: toActiveRun(chatId, active),
  });
}

/**
 * Why an image URL of a turn is refused (undefined when it is not), for the log only. A `/files/`
 * URL of this service is refused whoever's file it names: the turn would keep it, and no
 * stored `image_urls` is ever signed afresh (an upload is named by `attachmentIds`).
 */
async function imageUrlRefusal(deps: OperationDeps, url: string): Promise<string | undefined> {
  if (fileUrlOf(deps.config, url)) return 'a file URL of this service';
  return hostRefusal(new URL(url), deps.config);
}

/**
 * Refuses, before anything is written, an image URL whose host is private or does not resolve
 * (the model and the tools would fetch it later, on the worker, from inside the network), or
 * that names this service's own files. Every refusal reads the same: NOT_PUBLIC_MESSAGE.
 */
async function assertPublicImageUrls(deps: OperationDeps, urls: readonly string[]): Promise<void> {
  const refusals = await Promise.all(urls.map((url) => imageUrlRefusal(deps, url)));
  const details = refusals.flatMap((reason, i) => {
    if (reason === undefined) return [];
    deps.logger.info({ index: i, reason }, 'image URL refused at admission');
    return [{ path: `body.image_urls.${i}`, message: NOT_PUBLIC_MESSAGE }];
  });
  if (details.length) throw new ValidationError(details);
}

/**
 * Admits a turn: its chat (when new), user message, attachments and QUEUED run, written at once
 * (see insertTurn). A chat with an active run answers 409 RUN_ACTIVE, and nothing is written;
 * unless the turn says otherwise (`onActiveRun`): queued behind it (409 QUEUE_FULL past the
 * chat's cap), or queued first with the cancel of every other turn of the chat recorded.
 */
export async function admitTurn(
  deps: OperationDeps,
  turn: TurnRequest,
  uploads: readonly PreparedAttachment[] = [],
): Promise<AdmittedTurn> {
  assertOffered(deps.config, turn.settings ?? {});
  await assertPublicImageUrls(deps, turn.imageUrls);
  const runId = turn.runId ?? randomUUID();
  const messageId = randomUUID();
  const assistantMessageId = randomUUID();
  const traceId = traceIdOf(turn.traceparent);
  const chatId = turn.chatId ?? randomUUID();
  addLogContext({ chatId, runId });

  const blocks: ContentBlock[] = [{ type: 'text', text: turn.text }];
  const attachmentIds = [...new Set(turn.attachmentIds)];
  if (attachmentIds.length) {
    const rows = await selectOwnAttachments(deps.db.pool, turn.userId, attachmentIds);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of attachmentIds) {
      const a = byId.get(id);
      if (!a) throw new NotFoundError('ATTACHMENT_NOT_FOUND', 'An attachment was not found.');
      blocks.push({ type: mediaKind(a.mimeType), attachmentId: a.id, url: deps.storage.url(a.storageKey) });
    }
  }
  for (const url of turn.imageUrls) blocks.push({ type: 'image', attachmentId: null, url });
  for (const u of uploads)
    blocks.push({ type: mediaKind(u.mimeType), attachmentId: u.id, url: deps.storage.url(u.storageKey) });

  // A unique violation is a send racing this one into the same chat: the chat is busy. A deadlock
  // is the chat's previous run ending at this moment: its ending waits on the chat this send
  // locked, while this send's check of the chat's one active run waits on that ending; PostgreSQL
  // rolls one back, and this send, run again, finds the run ended.
  const insert = (): Promise<TurnAdmission> =>
    retryOnConflict(() =>
      insertTurn(deps.db.pool, {
        runId,
        chatId,
        userId: turn.userId,
        newChatTitle: turn.chatId ? null : defaultTitle(turn.text),
        messageId,
        assistantMessageId,
        planMode: turn.planMode,
        traceId,
        via: turn.via,
        contentBlocks: blocks,
        attachmentIds,
        uploads,
        maxActiveRuns: deps.config.MAX_ACTIVE_RUNS_PER_USER,
        closingSeconds: RECENTLY_ENDED_SECONDS,
        ...runSettingsInput(deps.config, turn),
        metadata: turn.metadata ?? {},
        onActiveRun: turn.onActiveRun ?? 'reject',
        maxQueued: deps.config.MAX_QUEUED_TURNS_PER_CHAT,
      }),
    ).catch((err: unknown) => {
      if ((err as { code?: string }).code === PG_UNIQUE_VIOLATION) return 'chat-busy';
      throw err;
    });
  let admitted = await insert();
  if (admitted === 'chat-busy') {
    const busy = await runActiveError(deps, turn.userId, chatId);
    if (busy) throw busy;
    // The active run ended between the two looks: the chat takes this turn now.
    admitted = await insert();
    if (admitted === 'chat-busy') {
      throw (
        (await runActiveError(deps, turn.userId, chatId)) ??
        new ConflictError('RUN_ACTIVE', 'A run of this chat is still active.')
      );
    }
  }
  if (admitted === 'no-chat') throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
  if (admitted === 'queue-full') {
    const max = deps.config.MAX_QUEUED_TURNS_PER_CHAT;
    throw new ConflictError(
      'QUEUE_FULL',
      `This chat already has ${max} turns queued; send again when one has started.`,
    );
  }
  if (admitted === 'at-cap') {
    throw activeLimit('MAX_ACTIVE_RUNS_PER_USER', deps.config.MAX_ACTIVE_RUNS_PER_USER, 'runs');
  }
  runsAdmitted.inc({ plan_mode: String(turn.planMode) });
  return {
    messageId,
    closingExecution: admitted.closingExecution,
    queuePosition: admitted.queuePosition,
    cancelled: admitted.cancelled,
    run: {
      runId,
      chatId,
      userId: turn.userId,
      messageId,
      assistantMessageId,
      traceId,
      planMode: turn.planMode,
      via: turn.via,
      metadata: turn.metadata ?? {},
    },
  };
}
