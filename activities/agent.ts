import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { permanentFailure } from '../core/errors/failures';
import { faultPoint } from '../core/process/fault';
import { addLogContext } from '../core/logging/context';
import { modelStepDuration } from '../core/metrics/worker';
import type { ModelMessage, ModelReply, ModelToolSpec } from '../core/model/types';
import { watchRunCancel } from '../core/runs/cancel-watch';
import {
  expirePlanWaitpoint,
  finishRun,
  gateStep,
  openPlanWaitpoint,
  selectPlanReply,
  writeRunText,
  type FinishRunInput,
  type WaitpointStatus,
} from '../core/runs/store';
import { selectUntakenPromoted } from '../core/runs/queue';
import { storableJson, storableText } from '../core/db/storable';
import type { ContentBlock, Plan } from '../core/schemas/runs';
import {
  appendText,
  textPrefix,
  type AgentStepInput,
  type AgentStepResult,
  type RunEnded,
} from '../workflows/agent.contract';
import { toolOutputKey } from '../core/storage/keys';
import { refreshContentBlocks } from '../core/storage/signing';
import type { ActivityDeps } from './deps';

/** Partial text reaches the snapshot at most this often, however fast the model streams. */
const TEXT_WRITE_INTERVAL_MS = 250;
const HEARTBEAT_EVERY_MS = 1_000;

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
    if (ended) await deps.startDeliveries(ended.deliveries);
    return ended;
  }

  /** One model step, as agentStep describes it, its model call stopped by `stop`. */
  async function step(input: AgentStepInput, stop: AbortSignal): Promise<AgentStepResult> {
    const gate = await gateStep(pool, {
      runId: input.runId,
      triggerRunId: currentExecution(),
      step: input.step,
    });
    // A retry after this execution ended the run: its ending may have promoted the chat's next turn.
    if (gate.kind === 'ended') return { ...gate, next: await selectUntakenPromoted(pool, input.runId) };
    if (gate.kind !== 'run') return gate;
    addLogContext({ userId: gate.userId });
    await deps.startDeliveries(gate.deliveries);

    // A retry of a step whose plan was already put to the approver goes on with that plan.
    const proposed = input.planWaitpoint && (await selectPlanReply(pool, input.planWaitpoint.id));
    if (proposed && input.planWaitpoint)
      return { kind: 'tools', reply: proposed, waitpointId: input.planWaitpoint.id };

    const messages = [
      // Stored URLs may have expired; the model (and the tools it calls) get working ones.
      ...gate.history.map((m) =>
        toModelMessage(m.role, refreshContentBlocks(deps.config, m.contentBlocks, gate.userId)),
      ),
      ...input.turnMessages,
    ];
    const reply = await streamModelReply(deps, {
      runId: input.runId,
      step: input.step,
      prefix: textPrefix(input.textSoFar),
      messages,
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
    if (!input.planWaitpoint) return { kind: 'tools', reply };
    const open = await openPlanWaitpoint(pool, {
      runId: input.runId,
      waitpointId: input.planWaitpoint.id,
      plan: planOf(reply, input.step),
      reply,
      timeoutMs: input.planWaitpoint.timeoutMs,
    });
    // A cancel that came in during the step: no plan is put to anyone.
    if (!open) return { kind: 'stop' };
    return { kind: 'tools', reply, waitpointId: input.planWaitpoint.id };
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

/**
 * Streams one model reply, writing `prefix` + the text so far into the run at most every 250 ms
 * (and once more at the end). An activity heartbeats throughout so Temporal's cancel reaches it;
 * `stop` ends the call too (a local activity's own cancel comes late, see agentStep).
 */
async function streamModelReply(
  deps: AgentActivityDeps,
  input: {
    runId: string;
    step: number;
    prefix: string;
    messages: ModelMessage[];
    /** Whether the whole reply is written once it is in. */
    writeLast: (reply: ModelReply) => boolean;
    stop?: AbortSignal;
  },
): Promise<ModelReply> {
  if (!deps.model) throw permanentFailure('PROVIDER_NOT_CONFIGURED', 'No model provider is configured.');
  const ctx = Context.current();
  const signal = input.stop ? AbortSignal.any([ctx.cancellationSignal, input.stop]) : ctx.cancellationSignal;
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
    writing = writing.then(() =>
      writeRunText(deps.db.bookkeeping, { runId: input.runId, text, step: input.step }),
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
  const stopTimer = modelStepDuration.startTimer({ provider: deps.model.name });
  try {
    let reply: ModelReply;
    try {
      // A model may answer what PostgreSQL cannot store (a NUL); a run that could not record its
      // reply would retry its bookkeeping for ever.
      reply = storableJson(
        await deps.model.complete({
          messages: input.messages,
          tools: deps.toolSpecs,
          signal,
          onText,
        }),
      );
      stopTimer({ outcome: 'ok' });
    } catch (err) {
      stopTimer({ outcome: signal.aborted ? 'cancelled' : 'error' });
      throw err;
    }
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

/** The Temporal run id of the workflow execution this activity works for. */
function currentExecution(): string {
  const runId = Context.current().info.workflowExecution?.runId;
  if (!runId) throw new Error('A run step only runs inside its workflow.');
  return runId;
}

/** What the approver sees: the reply's text as the summary and each tool call as a step. */
function planOf(reply: ModelReply, step: number): Plan {
  const n = reply.toolCalls.length;
  return {
    summary: reply.text.trim() || `Run ${n} tool call${n === 1 ? '' : 's'}.`,
    steps: reply.toolCalls.map((c) => ({
      toolName: c.toolName,
      input: c.input,
      reason: `Requested by the agent for step ${step}.`,
    })),
  };
}

function toModelMessage(role: 'user' | 'assistant', blocks: ContentBlock[]): ModelMessage {
  if (role === 'user') {
    return {
      role: 'user',
      text: blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n'),
      media: blocks.flatMap((b) =>
        b.type === 'image' || b.type === 'video' || b.type === 'audio' ? [{ kind: b.type, url: b.url }] : [],
      ),
    };
  }
  // Earlier turns' tool exchanges are summarised as text: their provider call ids are long gone.
  const parts = blocks.flatMap((b) => {
    if (b.type === 'text') return [b.text];
    if (b.type === 'tool_result')
      return [
        b.result ? `[${b.toolName} result: ${b.result.output.url}]` : `[${b.toolName} failed: ${b.error}]`,
      ];
    return [];
  });
  return { role: 'assistant', text: parts.join('\n'), toolCalls: [] };
}

/** A stable id per stored object, so a retried ending names the same attachment. */
function uuidFromKey(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
