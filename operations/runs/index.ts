import type { z } from 'zod';
import type {
  CompletionFormInput,
  CompletionInput,
  queuedTurnSchema,
  RunSnapshot,
  WaitpointDto,
  PlanDecisionInput,
  OnActiveRun,
} from '../../core/schemas/runs';
import {
  sendSettingsOf,
  toRunSummary,
  toWaitpointDto,
  type RunListQuery,
  type RunMetadata,
  type RunSummary,
} from '../../core/schemas/runs';
import { page } from '../../core/schemas/common';
import { NotFoundError } from '../../core/errors/app-error';
import { selectChatRuns, selectUserRuns, type RunRow } from '../../core/runs/list';
import { admitRegeneration, type RegenerateRequest } from './regenerate';
import type { Page } from '../chats';
import { selectAdmittedTurn, type RunScope } from '../../core/runs/store';
import { selectQueuePosition } from '../../core/runs/queue';
import { discardObjects, putObjects, type PreparedAttachment } from '../../core/uploads/attachments';
import type { ReceivedFile } from '../../core/uploads/receive';
import type { Caller, OperationDeps } from '../deps';
import { admitTurn, type AdmittedTurn, type SendSettings } from './admission';
import type { BudgetInput } from '../../core/schemas/agent';
import { cancelActiveRunOfChat, decideWaitpoint, requestCancel, settleCancelled } from './control';
import { collectChatEvents, openChatStream, type ChatStreamEvent } from './chat-events';
import { openRunStream, type OpenStreamInput } from './events';
import { loadSnapshot } from './snapshot';
import type { NotificationHub } from '../../core/db/notification-hub';
import { weakEtag } from '../../core/hashing/canonical';
import { createPollMemory } from './poll-memory';
import { startRun } from './start';
import { createStartPace } from './start-pace';
import { watchRun } from './watch';
import { fileFingerprints } from '../../core/uploads/receive';
import { idempotent, keyedId, type KeyUse } from '../idempotency';
import { faultPoint } from '../../core/process/fault';
import { counted, heldOpen, type Streams } from '../streams';
import { sseStreamsOpen } from '../../core/metrics/registry';

export type QueuedTurn = z.output<typeof queuedTurnSchema>;

export interface SendTurnInput {
  text: string;
  chatId?: string;
  imageUrls: string[];
  attachmentIds: string[];
  planMode: boolean;
  /** Files sent with the turn, already received and sniffed by the transport. */
  files: readonly ReceivedFile[];
  /** The W3C trace context of the request, carried into the run's events. */
  traceparent?: string;
  /** The send's own settings (model, instructions, maxSteps, tools); each optional. */
  settings?: SendSettings;
  budget?: BudgetInput;
  /** The run's metadata pairs. */
  metadata?: RunMetadata;
  /** What the turn does when its chat has a run not yet terminal (see admitTurn). */
  onActiveRun: OnActiveRun;
}

/**
 * A send as its request reads it (a JSON body, a form, MCP's arguments), for sendTurn: every
 * transport maps it here, so none can leave a field out.
 */
export function turnInput(
  body: CompletionInput | CompletionFormInput,
  received: { files?: readonly ReceivedFile[]; traceparent?: string } = {},
): SendTurnInput {
  return {
    text: body.text,
    chatId: body.chatId,
    imageUrls: 'image_urls' in body ? body.image_urls : [],
    attachmentIds: 'attachmentIds' in body ? body.attachmentIds : [],
    planMode: body.planMode,
    files: received.files ?? [],
    traceparent: received.traceparent,
    // Settings and a budget come in a JSON body; a multipart send takes its chat's defaults.
    ...('image_urls' in body ? sendSettingsOf(body) : {}),
    metadata: body.metadata,
    onActiveRun: body.onActiveRun,
  };
}

/** Turns and runs, as every transport (REST, MCP, the console) drives them. */
export function createRunsOperations(deps: OperationDeps, hub: NotificationHub, streams: Streams) {
  const polls = createPollMemory(hub);
  // A start into a chat whose previous execution is still closing waits for that first, so it is
  // paced apart: a client chaining turns in its chat does not decide for sends into other chats.
  const paces = { fresh: createStartPace(), afterClosing: createStartPace() };
  /**
   * Queues a turn: the files are stored first and their rows join the turn's one statement, so a
   * refused send (409, 404) deletes them again and leaves nothing behind; then the run's
   * workflow is started (or left to the dispatcher when Temporal cannot take it now).
   */
  /** Starts still going after their sends were answered; each ends by its own deadline. */
  const startsInFlight = new Set<Promise<string | null>>();
  const sendTurn = async (caller: Caller, input: SendTurnInput, keyed?: KeyUse): Promise<QueuedTurn> => {
    // A keyed send's run id is named by the user and this use of the key: a retry whose first
    // request's gateway died after admitting the turn, before storing the answer, finds that turn
    // (the dispatcher starts it if nothing did) instead of admitting a second one.
    const runId = keyed ? keyedId('sendTurn', caller.userId, keyed) : undefined;
    const earlier = runId && keyed?.resumed && (await selectAdmittedTurn(deps.db.pool, caller.userId, runId));
    if (runId && earlier)
      return {
        ...earlier,
        runId,
        status: 'queued',
        queuePosition: await selectQueuePosition(deps.db.pool, runId),
      };
    const uploads: PreparedAttachment[] = await putObjects(deps, caller.userId, input.files);
    let admitted: AdmittedTurn;
    try {
      admitted = await admitTurn(deps, { userId: caller.userId, via: caller.via, ...input, runId }, uploads);
    } catch (err) {
      await discardObjects(deps, uploads);
      throw err;
    }
    await faultPoint(deps.config, 'admission', { runId: admitted.run.runId });
    if (admitted.cancelled.length) {
      // An interrupt: the runs whose cancel it recorded end (the queued ones here, the head in its
      // execution); the chat's head's ending promotes this turn, and its workflow continues into it.
      for (const run of admitted.cancelled) polls.forget({ runId: run.runId });
      await settleCancelled(deps, admitted.run.chatId, admitted.cancelled);
    }
    const interrupted =
      input.onActiveRun === 'interrupt' ? { interruptedRunIds: admitted.cancelled.map((r) => r.runId) } : {};
    if (admitted.queuePosition !== null) {
      return {
        chatId: admitted.run.chatId,
        messageId: admitted.messageId,
        runId: admitted.run.runId,
        triggerRunId: null,
        status: 'queued',
        queuePosition: admitted.queuePosition,
        ...interrupted,
      };
    }
    return startAdmitted(admitted, interrupted);
  };

  /**
   * The turn is durable now: its answer does not wait on Temporal for more than a moment. A start
   * that takes longer (Temporal busy or away) goes on after the answer, with the dispatcher behind
   * it, and the turn says `triggerRunId: null`, as the spec allows.
   */
  const startAdmitted = async (
    admitted: AdmittedTurn,
    interrupted: Pick<QueuedTurn, 'interruptedRunIds'> = {},
  ): Promise<QueuedTurn> => {
    const starting = startRun(deps, admitted.run, 'admission', admitted.closingExecution).catch(
      (err: unknown) => {
        deps.logger.warn({ runId: admitted.run.runId, err }, 'run not started yet; the dispatcher will');
        return null;
      },
    );
    startsInFlight.add(starting);
    void starting.finally(() => startsInFlight.delete(starting));
    const pace = admitted.closingExecution ? paces.afterClosing : paces.fresh;
    const triggerRunId = deps.config.SEND_START_WAIT === 'off' ? null : await pace.idInTime(starting);
    return {
      chatId: admitted.run.chatId,
      messageId: admitted.messageId,
      runId: admitted.run.runId,
      triggerRunId,
      status: 'queued',
      queuePosition: null,
      ...interrupted,
    };
  };

  /** Answers the chat's latest user message again (see admitRegeneration), as a send starts its run. */
  const regenerate = async (
    caller: Caller,
    input: RegenerateRequest,
    keyed?: KeyUse,
  ): Promise<QueuedTurn> => {
    // A keyed regenerate's run is found again by a retry, as a keyed send's (see sendTurn).
    const runId = keyed ? keyedId('regenerate', caller.userId, keyed) : undefined;
    const earlier = runId && keyed?.resumed && (await selectAdmittedTurn(deps.db.pool, caller.userId, runId));
    // A regenerate is never queued: a busy chat refuses it.
    if (runId && earlier) return { ...earlier, runId, status: 'queued', queuePosition: null };
    return startAdmitted(await admitRegeneration(deps, caller, input, runId));
  };

  return {
    /** Queues a turn, once per Idempotency-Key (see idempotent). */
    sendTurn: idempotent(deps, 'sendTurn', {
      fingerprint: async ({ traceparent: _trace, files, ...request }: SendTurnInput) => ({
        ...request,
        files: await fileFingerprints(files),
      }),
      run: sendTurn,
    }),

    /** Answers a message again, once per Idempotency-Key (see idempotent). */
    regenerate: idempotent(deps, 'regenerate', {
      fingerprint: ({ traceparent: _trace, ...request }: RegenerateRequest) => request,
      run: regenerate,
    }),

    /**
     * The caller's runs, newest first: over all their chats (see selectUserRuns), or one chat's
     * when `chatId` is given (not the caller's chat: 404 CHAT_NOT_FOUND).
     */
    async listRuns(caller: Caller, query: RunListQuery, chatId?: string): Promise<Page<RunSummary>> {
      const rows = chatId
        ? await selectChatRuns(deps.db.pool, { userId: caller.userId, chatId }, query)
        : await selectUserRuns(deps.db.pool, caller.userId, query);
      if (!rows) throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
      return runPage(rows, query.limit);
    },

    getRun(caller: Caller, ids: Omit<RunScope, 'userId'>): Promise<RunSnapshot> {
      return loadSnapshot(deps, { userId: caller.userId, ...ids });
    },

    /**
     * A poll: the snapshot and its ETag, which this gateway remembers (see createPollMemory) so
     * the caller's next polls of an unchanged run are answered without a read.
     */
    pollRun(caller: Caller, ids: Omit<RunScope, 'userId'>): Promise<{ snapshot: RunSnapshot; etag: string }> {
      const scope = { userId: caller.userId, ...ids };
      return polls.read(scope, async () => {
        const snapshot = await loadSnapshot(deps, scope);
        return { snapshot, etag: weakEtag(JSON.stringify(snapshot)) };
      });
    },

    /** The ETag of the caller's last poll of the run while nothing changed since; else undefined. */
    unchangedRun(caller: Caller, ids: Omit<RunScope, 'userId'>): string | undefined {
      return polls.unchanged({ userId: caller.userId, ...ids });
    },

    /**
     * The run each time it changes, until `signal` aborts (see watchRun); not the caller's: a 404.
     * One of the caller's open streams and waits while it lasts (429 ACTIVE_LIMIT past them; a 401
     * when the credential it was opened with ends).
     */
    watchRun(
      caller: Caller,
      ids: Omit<RunScope, 'userId'>,
      signal: AbortSignal,
    ): AsyncGenerator<RunSnapshot> {
      return heldOpen(streams, caller, signal, (held) =>
        watchRun(deps, hub, { userId: caller.userId, ...ids }, held),
      );
    },

    /**
     * The run's live stream (see openRunStream); a run that is not the caller's is a 404. One of the
     * caller's open streams and waits while it lasts (429 ACTIVE_LIMIT past them).
     */
    async streamRun(caller: Caller, ids: Omit<RunScope, 'userId'>, input: OpenStreamInput) {
      const wait = await streams.open(caller, input.signal);
      return openRunStream(deps, hub, { userId: caller.userId, ...ids }, input, wait);
    },

    /**
     * The chat's live stream (see openChatStream); a chat that is not the caller's is a 404. One of
     * the caller's open streams and waits while it lasts (429 ACTIVE_LIMIT past them).
     */
    async streamChat(caller: Caller, chatId: string, input: OpenStreamInput) {
      const wait = await streams.open(caller, input.signal);
      return counted(
        sseStreamsOpen,
        await openChatStream(deps, hub, { userId: caller.userId, chatId }, input, wait),
      );
    },

    /**
     * The chat's events after `after` (its snapshot first without it), waiting until at least one
     * has come or `signal` aborts (then none): the chat's stream as a long poll, for MCP.
     */
    async followChat(
      caller: Caller,
      chatId: string,
      input: OpenStreamInput,
    ): Promise<Extract<ChatStreamEvent, { kind: 'event' }>[]> {
      const events: Extract<ChatStreamEvent, { kind: 'event' }>[] = [];
      // Read to its end, so a credential that ended meanwhile is the caller's 401 (see heldOpen).
      const held = heldOpen(streams, caller, input.signal, async function* (signal) {
        const scope = { userId: caller.userId, chatId };
        // The place is heldOpen's to give back.
        yield await collectChatEvents(
          await openChatStream(deps, hub, scope, input, { signal, close: () => undefined }),
        );
      });
      for await (const batch of held) events.push(...batch);
      return events;
    },

    /**
     * Lets the starts still in flight end: a stop must not close the Temporal connection under a
     * start whose retry is pending (it would throw from its timer).
     */
    async close(): Promise<void> {
      await Promise.all(startsInFlight);
    },

    /** Cancels the run (see requestCancel) and answers its snapshot as it now stands. */
    async cancelRun(caller: Caller, ids: Omit<RunScope, 'userId'>): Promise<RunSnapshot> {
      const scope = { userId: caller.userId, ...ids };
      await requestCancel(deps, scope);
      polls.forget(ids);
      return loadSnapshot(deps, scope);
    },

    async decidePlan(
      caller: Caller,
      ids: Omit<RunScope, 'userId'> & { waitpointId: string },
      decision: PlanDecisionInput,
    ): Promise<WaitpointDto> {
      const waitpoint = await decideWaitpoint(deps, { userId: caller.userId, ...ids }, decision, caller);
      polls.forget(ids);
      return toWaitpointDto(waitpoint);
    },

    /**
     * Deleting a chat stops its work: its active run, if any, is cancelled, and no poll of its runs
     * is answered from this gateway's memory.
     */
    cancelActiveRunOfChat: (chatId: string) => {
      polls.forget({ chatId });
      return cancelActiveRunOfChat(deps, chatId);
    },
  };
}

/** One page of runs as the lists show them, its cursor the last run's keyset position. */
function runPage(rows: RunRow[], limit: number): Page<RunSummary> {
  const result = page(rows, limit, (row) => ({ at: row.createdAt, id: row.id }));
  return { data: result.data.map(toRunSummary), nextCursor: result.nextCursor };
}

export type RunsOperations = ReturnType<typeof createRunsOperations>;
export { startDispatcher } from './dispatcher';
export { startReconciler } from './reconciler';
