import type { z } from 'zod';
import type { queuedTurnSchema, RunSnapshot, WaitpointDto, PlanDecisionInput } from '../../core/schemas/runs';
import { toWaitpointDto } from '../../core/schemas/runs';
import type { RunScope } from '../../core/runs/store';
import { discardObjects, putObjects, type PreparedAttachment } from '../../core/uploads/attachments';
import type { ReceivedFile } from '../../core/uploads/receive';
import type { Caller, OperationDeps } from '../deps';
import { admitTurn, type AdmittedTurn } from './admission';
import { cancelActiveRunOfChat, decideWaitpoint, requestCancel } from './control';
import { loadSnapshot } from './snapshot';
import { startRun } from './start';

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
}

/** Turns and runs, as every transport (REST, MCP, the console) drives them. */
export function createRunsOperations(deps: OperationDeps) {
  return {
    /**
     * Queues a turn: the files are stored first and their rows join the turn's one statement, so a
     * refused send (409, 404) deletes them again and leaves nothing behind; then the run's
     * workflow is started (or left to the dispatcher when Temporal cannot take it now).
     */
    async sendTurn(caller: Caller, input: SendTurnInput): Promise<QueuedTurn> {
      const uploads: PreparedAttachment[] = await putObjects(deps.storage, caller.userId, input.files);
      let admitted: AdmittedTurn;
      try {
        admitted = await admitTurn(deps, { userId: caller.userId, ...input }, uploads);
      } catch (err) {
        await discardObjects(deps.storage, uploads);
        throw err;
      }
      if (deps.config.FAULT_PAUSE_BEFORE_START !== undefined) {
        deps.logger.warn({ runId: admitted.run.runId }, 'fault injection: paused between commit and start');
        await new Promise((resolve) => setTimeout(resolve, deps.config.FAULT_PAUSE_BEFORE_START));
      }
      const triggerRunId = await startRun(deps, admitted.run);
      return {
        chatId: admitted.run.chatId,
        messageId: admitted.messageId,
        runId: admitted.run.runId,
        triggerRunId,
        status: 'queued',
      };
    },

    getRun(caller: Caller, ids: Omit<RunScope, 'userId'>): Promise<RunSnapshot> {
      return loadSnapshot(deps, { userId: caller.userId, ...ids });
    },

    /** Cancels the run (see requestCancel) and answers its snapshot as it now stands. */
    async cancelRun(caller: Caller, ids: Omit<RunScope, 'userId'>): Promise<RunSnapshot> {
      const scope = { userId: caller.userId, ...ids };
      await requestCancel(deps, scope);
      return loadSnapshot(deps, scope);
    },

    async decidePlan(
      caller: Caller,
      ids: Omit<RunScope, 'userId'> & { waitpointId: string },
      decision: PlanDecisionInput,
    ): Promise<WaitpointDto> {
      return toWaitpointDto(await decideWaitpoint(deps, { userId: caller.userId, ...ids }, decision));
    },

    /** Deleting a chat stops its work: its active run, if any, is cancelled. */
    cancelActiveRunOfChat: (chatId: string) => cancelActiveRunOfChat(deps, chatId),
  };
}

export type RunsOperations = ReturnType<typeof createRunsOperations>;
export { startDispatcher } from './dispatcher';
export { startReconciler } from './reconciler';
