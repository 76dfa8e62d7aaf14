import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { faultPoint } from '../core/process/fault';
import { addLogContext } from '../core/logging/context';
import { HISTORY_READ_LIMIT } from '../core/model/context';
import type { ModelReply, ModelToolSpec } from '../core/model/types';
import { watchRunCancel } from '../core/runs/cancel-watch';
import {
  expirePlanWaitpoint,
  finishRun,
  gateStep,
  openPlanWaitpoint,
  selectPlanReply,
  type FinishRunInput,
  type WaitpointStatus,
} from '../core/runs/store';
import { selectUntakenPromoted } from '../core/runs/queue';
import type { ContentBlock, Plan } from '../core/schemas/runs';
import { TOOLS, isToolName } from '../core/tools/registry';
import {
  appendText,
  textPrefix,
  type AgentStepInput,
  type AgentStepResult,
  type RunEnded,
} from '../workflows/agent.contract';
import { toolOutputKey } from '../core/storage/keys';
import type { ActivityDeps } from './deps';
import { buildContext, offeredModel, runSettings, streamModelReply } from './model-step';

export interface AgentActivityDeps extends ActivityDeps {
  toolSpecs: ModelToolSpec[];
}

export type FinishInput = Omit<FinishRunInput, 'images' | 'waitpointStatus'> & {
  waitpointStatus?: FinishRunInput['waitpointStatus'];
  /** The run's user, whose generated images a COMPLETE run attaches. */
  userId: string;
};

export function createAgentActivities(deps: AgentActivityDeps) {
  const { pool } = deps.db;

  /**
   * Images the run's tools made become attachments of the assistant message. Tools store their
   * output under `tools/<userId>/<toolCallId>/<filename>`, so the key is known without a lookup;
   * their sizes are read here, before the statement that ends the run.
   */
  async function generatedImages(userId: string, blocks: ContentBlock[]) {
    const found = blocks.flatMap((b) =>
      b.type === 'tool_result' && b.result
        ? b.result.assets
            .filter((a) => a.mimeType.startsWith('image/') && a.filename)
            .map((a) => ({ toolCallId: b.toolCallId, filename: a.filename ?? '', mimeType: a.mimeType }))
        : [],
    );
    return Promise.all(
      found.map(async (a) => {
        const storageKey = toolOutputKey(userId, a.toolCallId, a.filename);
        const object = await deps.storage.get(storageKey);
        object.body.destroy();
        return {
          id: uuidFromKey(storageKey),
          storageKey,
          filename: a.filename,
          mimeType: a.mimeType,
          sizeBytes: object.size,
        };
      }),
    );
  }

  /** Ends the run (see core/runs/store finishRun) and starts the deliveries of its event. */
  async function finish({ userId, ...input }: FinishInput) {
    let contentBlocks = input.contentBlocks;
    let images: FinishRunInput['images'] = [];
    if (input.status === 'COMPLETE') {
      images = await generatedImages(userId, contentBlocks);
      contentBlocks = [
        ...contentBlocks,
        ...images.map((i) => ({
          type: 'image' as const,
          attachmentId: i.id,
          url: deps.storage.url(i.storageKey),
        })),
      ];
    }
    const ended = await finishRun(pool, {
      ...input,
      contentBlocks,
      images,
      waitpointStatus: input.waitpointStatus ?? 'CANCELLED',
    });
    if (ended) {
      await deps.startDeliveries(ended.deliveries);
      await faultPoint(deps.config, 'run-finished', { runId: input.runId });
    }
    return ended;
  }

  /** One model step, as agentStep describes it, its model call stopped by `stop`. */
  async function step(input: AgentStepInput, stop: AbortSignal): Promise<AgentStepResult> {
    const gate = await gateStep(pool, {
      runId: input.runId,
      triggerRunId: currentExecution(),
      step: input.step,
      historyLimit: HISTORY_READ_LIMIT,
    });
    // A retry after this execution ended the run: its ending may have promoted the chat's next turn.
    if (gate.kind === 'ended') return { ...gate, next: await selectUntakenPromoted(pool, input.runId) };
    if (gate.kind !== 'run') return gate;
    addLogContext({ userId: gate.userId });
    await deps.startDeliveries(gate.deliveries);

    const settings = runSettings(deps.config, gate.context.settings);
    const { maxSteps } = settings;
    // A retry of a step whose plan was already put to the approver goes on with that plan.
    const proposed = input.planWaitpoint && (await selectPlanReply(pool, input.planWaitpoint.id));
    if (proposed && input.planWaitpoint)
      return { kind: 'tools', reply: proposed, waitpointId: input.planWaitpoint.id, maxSteps };

    const payer = {
      runId: input.runId,
      userId: gate.userId,
      step: input.step,
      maxCredits: gate.context.budget?.maxCredits ?? null,
    };
    const model = offeredModel(deps, settings.model);
    const tools = deps.toolSpecs.filter((t) => settings.tools.includes(t.name));
    // A reply an earlier attempt of this step was charged for needs no context: it is not asked again.
    const context = gate.context.chargedReply
      ? { system: '', messages: [], inputTokens: 0 }
      : await buildContext(deps, {
          payer,
          model,
          instructions: settings.instructions,
          tools,
          context: gate.context,
          turn: input.turnMessages,
          signal: stop,
        });
    const reply = await streamModelReply(deps, {
      payer,
      prefix: textPrefix(input.textSoFar),
      model,
      ...context,
      tools,
      charged: gate.context.chargedReply,
      // A reply that ends the turn is written by the statement that ends it.
      writeLast: (r) => r.toolCalls.length > 0,
      stop,
    });
    await faultPoint(deps.config, 'model-step', { runId: input.runId, step: input.step });

    if (reply.toolCalls.length === 0) {
      const text = appendText(input.textSoFar, reply.text);
      const blocks: ContentBlock[] = reply.text
        ? [...input.contentBlocks, { type: 'text', text: reply.text }]
        : input.contentBlocks;
      const ended = await finish({
        runId: input.runId,
        userId: gate.userId,
        status: 'COMPLETE',
        error: null,
        text,
        contentBlocks: blocks,
      });
      return ended
        ? { kind: 'ended', status: ended.status, error: ended.error, next: ended.next }
        : { kind: 'missing' };
    }
    if (!input.planWaitpoint) return { kind: 'tools', reply, maxSteps };
    const open = await openPlanWaitpoint(pool, {
      runId: input.runId,
      waitpointId: input.planWaitpoint.id,
      plan: planOf(deps.config, reply, input.step),
      reply,
      timeoutMs: input.planWaitpoint.timeoutMs,
    });
    // A cancel that came in during the step: no plan is put to anyone.
    if (!open) return { kind: 'stop' };
    return { kind: 'tools', reply, waitpointId: input.planWaitpoint.id, maxSteps };
  }

  return {
    /**
     * One model step of a run. It first checks, under the run's lock, that the run is still this
     * execution's to work on (and moves a QUEUED run to RUNNING with its agent.started). A reply
     * without tool calls ends the run in the same activity; a reply with tool calls opens the
     * plan's waitpoint when the plan still needs approval. A plain turn is this one activity. The
     * run's cancel stops the model call at its commit (a local activity hears nothing else of it
     * before its workflow task's next beat), and the step then answers `stop`.
     */
    async agentStep(input: AgentStepInput): Promise<AgentStepResult> {
      const cancel = watchRunCancel({ hub: deps.notifications, pool, logger: deps.logger }, input.runId);
      // The SDK never cancels a local activity at a stop; left alone, the step would hold the
      // worker past its grace and the run would wait for the workflow task's timeout. An activity
      // task needs none of this: the SDK cancels it at the grace's end, Temporal retries it.
      const handoff = Context.current().info.isLocal ? deps.stopping : undefined;
      try {
        return await step(input, handoff ? AbortSignal.any([cancel.signal, handoff]) : cancel.signal);
      } catch (err) {
        if (cancel.signal.aborted) return { kind: 'stop' };
        if (handoff?.aborted) return { kind: 'handoff' };
        throw err;
      } finally {
        cancel.stop();
      }
    },

    /** Ends a run the workflow's own steps did not end: failed, cancelled, refused or out of steps. */
    async finishRun(input: FinishInput): Promise<RunEnded | null> {
      const ended = await finish(input);
      return ended && { status: ended.status, error: ended.error, next: ended.next };
    },

    /** The approval timer fired: the waitpoint expires unless a decision got there first. */
    async expirePlan({ waitpointId }: { waitpointId: string }): Promise<{ status: WaitpointStatus }> {
      return { status: (await expirePlanWaitpoint(pool, waitpointId)).status };
    },
  };
}

export type AgentActivities = ReturnType<typeof createAgentActivities>;

/** The Temporal run id of the workflow execution this activity works for. */
function currentExecution(): string {
  const runId = Context.current().info.workflowExecution?.runId;
  if (!runId) throw new Error('A run step only runs inside its workflow.');
  return runId;
}

/**
 * What the approver sees: the reply's text as the summary, each tool call as a step with its price
 * in credits (what it costs when it succeeds), and the plan's total.
 */
function planOf(config: ActivityDeps['config'], reply: ModelReply, step: number): Plan {
  const n = reply.toolCalls.length;
  const steps = reply.toolCalls.map((c) => ({
    toolName: c.toolName,
    input: c.input,
    reason: `Requested by the agent for step ${step}.`,
    credits: isToolName(c.toolName) ? TOOLS[c.toolName].price(config) : '0',
  }));
  // In ten-thousandths, the ledger's unit, so the sum is exact.
  const total = steps.reduce((sum, s) => sum + Math.round(Number(s.credits) * 10_000), 0);
  return {
    summary: reply.text.trim() || `Run ${n} tool call${n === 1 ? '' : 's'}.`,
    steps,
    totalCredits: String(total / 10_000),
  };
}

/** A stable id per stored object, so a retried ending names the same attachment. */
function uuidFromKey(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
