import { permanentFailure } from '../core/errors/failures';
import type { ModelMessage, ModelReply } from '../core/model/types';
import {
  expirePlanWaitpoint,
  gateStep,
  loadHistory,
  openPlanWaitpoint,
  runUserId,
  type WaitpointStatus,
} from '../core/runs/store';
import type { Plan } from '../core/schemas/runs';
import { startDeliveries, starterOf } from '../workflows/client';
import { toModelMessage } from '../core/model/context';
import { currentExecution, type AgentActivityDeps } from './agent';
import { offeredModel, runSettings, streamModelReply } from './model-step';

/**
 * The activities only v1 agent executions call (workflows/legacy/agent-v1.ts), kept while such
 * executions may still be open, on today's statements: a v1 run gets the same row locks, the same
 * events with its rows and the same endings as a v2 run. Delete with the v1 workflow.
 */
export function createAgentV1Activities(deps: AgentActivityDeps) {
  const { pool } = deps.db;
  const starter = starterOf(deps);

  return {
    async markRunStarted({
      runId,
    }: {
      runId: string;
    }): Promise<'STARTED' | 'CANCEL_REQUESTED' | 'NOT_QUEUED'> {
      const gate = await gateStep(pool, {
        runId,
        triggerRunId: currentExecution(),
        step: 1,
        historyLimit: 1,
      });
      if (gate.kind === 'missing') throw permanentFailure('RUN_NOT_FOUND', 'The run no longer exists.');
      if (gate.kind === 'stop') return 'CANCEL_REQUESTED';
      if (gate.kind !== 'run') return 'NOT_QUEUED';
      await startDeliveries(starter, gate.deliveries);
      return 'STARTED';
    },

    async loadHistory({ runId }: { runId: string }): Promise<ModelMessage[]> {
      return (await loadHistory(pool, runId)).map((m) => toModelMessage(m.role, m.contentBlocks));
    },

    async callModel(input: {
      runId: string;
      step: number;
      messages: ModelMessage[];
      textSoFar: string;
    }): Promise<ModelReply> {
      const settings = runSettings(deps.config, null);
      return streamModelReply(deps, {
        payer: {
          runId: input.runId,
          userId: (await runUserId(pool, input.runId)) ?? '',
          step: input.step,
          maxCredits: null,
        },
        prefix: input.textSoFar,
        model: offeredModel(deps, settings.model),
        system: settings.instructions,
        messages: input.messages,
        tools: deps.toolSpecs,
        inputTokens: 0,
        charged: null,
        writeLast: () => true,
      });
    },

    async openPlanWaitpoint(input: { runId: string; waitpointId: string; plan: Plan; timeoutMs: number }) {
      await openPlanWaitpoint(pool, input);
    },

    async expireWaitpoint({
      waitpointId,
    }: {
      runId: string;
      waitpointId: string;
    }): Promise<{ status: WaitpointStatus }> {
      return { status: (await expirePlanWaitpoint(pool, waitpointId)).status };
    },

    /** The approving route now moves the run back to RUNNING itself. */
    async resumeRun(_input: { runId: string }): Promise<void> {},
  };
}

export type AgentV1Activities = ReturnType<typeof createAgentV1Activities>;
