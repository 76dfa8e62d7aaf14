import { randomUUID } from 'node:crypto';
import { AppError, ConflictError, NotFoundError } from '../../core/errors/app-error';
import { retryOnConflict } from '../../core/db/client';
import { addLogContext } from '../../core/logging/context';
import { runsAdmitted } from '../../core/metrics/registry';
import { insertRegeneration, type RegenerationAdmission } from '../../core/runs/store';
import type { RunMetadata } from '../../core/schemas/runs';
import type { Caller, OperationDeps } from '../deps';
import { activeLimit } from '../limits';
import {
  assertOffered,
  PG_UNIQUE_VIOLATION,
  runActiveError,
  runSettingsInput,
  traceIdOf,
  type AdmittedTurn,
  type SendSettings,
} from './admission';
import type { BudgetInput } from '../../core/schemas/agent';
import { RECENTLY_ENDED_SECONDS } from './start';

export interface RegenerateRequest {
  chatId: string;
  /** The user message to answer again, one of its answers, or a run's `assistantMessageId`. */
  messageId: string;
  planMode: boolean;
  metadata: RunMetadata;
  /** The run's own settings, as a send's: each wins over the chat's default and the operator's. */
  settings?: SendSettings;
  budget?: BudgetInput;
  traceparent?: string;
}

/**
 * Admits a run answering the chat's latest user message again (see insertRegeneration): the
 * earlier answers stay, and the new one, once given, is the one the agent reads on. A busy chat
 * answers as a send does (409 RUN_ACTIVE naming its run), and so does a user at the cap; nothing
 * is written unless the run is admitted. Its settings resolve as a send's, against the chat's
 * defaults as they are now.
 */
export async function admitRegeneration(
  deps: OperationDeps,
  caller: Pick<Caller, 'userId' | 'via'>,
  request: RegenerateRequest,
  runId: string = randomUUID(),
): Promise<AdmittedTurn> {
  assertOffered(deps.config, request.settings ?? {});
  const assistantMessageId = randomUUID();
  const traceId = traceIdOf(request.traceparent);
  addLogContext({ chatId: request.chatId, runId });
  const insert = () =>
    retryOnConflict(() =>
      insertRegeneration(deps.db.pool, {
        runId,
        chatId: request.chatId,
        userId: caller.userId,
        messageId: request.messageId,
        assistantMessageId,
        planMode: request.planMode,
        traceId,
        via: caller.via,
        metadata: request.metadata,
        maxActiveRuns: deps.config.MAX_ACTIVE_RUNS_PER_USER,
        closingSeconds: RECENTLY_ENDED_SECONDS,
        ...runSettingsInput(deps.config, request),
      }),
    ).catch((err: unknown) => {
      // The chat's one active run (its partial unique index): a send or regenerate got there first.
      if ((err as { code?: string }).code === PG_UNIQUE_VIOLATION)
        return { admission: 'chat-busy' as const, userMessageId: null };
      throw err;
    });
  let { admission, userMessageId } = await insert();
  // The active run may end between the two looks: the chat takes this run then (as admitTurn).
  if (admission === 'chat-busy') {
    const busy = await runActiveError(deps, caller.userId, request.chatId);
    if (busy) throw busy;
    ({ admission, userMessageId } = await insert());
  }
  if (admission === 'chat-busy')
    throw (
      (await runActiveError(deps, caller.userId, request.chatId)) ??
      new ConflictError('RUN_ACTIVE', 'A run of this chat is still active.')
    );
  refuseUnlessAdmitted(deps, admission);
  runsAdmitted.inc({ plan_mode: String(request.planMode) });
  return {
    messageId: userMessageId as string,
    closingExecution: admission.closingExecution,
    queuePosition: null,
    cancelled: [],
    run: {
      runId,
      chatId: request.chatId,
      userId: caller.userId,
      messageId: userMessageId as string,
      assistantMessageId,
      traceId,
      planMode: request.planMode,
      via: caller.via,
      metadata: request.metadata,
    },
  };
}

function refuseUnlessAdmitted(
  deps: OperationDeps,
  admission: Exclude<RegenerationAdmission, 'chat-busy'>,
): asserts admission is Extract<RegenerationAdmission, { admitted: true }> {
  switch (admission) {
    case 'no-chat':
      throw new NotFoundError('CHAT_NOT_FOUND', 'Chat not found.');
    case 'no-message':
      throw new AppError('MESSAGE_NOT_FOUND', 'Message not found.');
    case 'not-latest':
      throw new AppError(
        'NOT_LATEST_TURN',
        "Only the chat's latest turn can be regenerated: its answers would land after the later turns. Fork the chat at this message (POST /api/v1/chats/{chatId}/fork) and regenerate it there.",
      );
    case 'at-cap':
      throw activeLimit('MAX_ACTIVE_RUNS_PER_USER', deps.config.MAX_ACTIVE_RUNS_PER_USER, 'runs');
  }
}
