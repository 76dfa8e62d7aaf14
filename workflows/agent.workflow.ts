import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities/agent';
import type { ToolsActivities } from '../activities/tools';
import type { ModelMessage, ModelToolCall } from '../core/model/types';
import type { ToolResult } from '../core/schemas/events';
import type { ContentBlock } from '../core/schemas/runs';
import {
  LOCAL_TOOL_CALL,
  MODEL_STEP,
  MODEL_STEP_LOCAL,
  RUN_BOOKKEEPING,
  TOOL_CALL,
} from './activity-options';
import {
  CHAT_QUEUE_PATCH,
  MAX_MODEL_STEPS,
  PLAN_WAIT_ACTIVITY,
  agentRunMemo,
  appendText,
  modelStepActivity,
  planDecisionSignal,
  runStateQuery,
  type AgentRunInput,
  type AgentRunOutput,
  type AgentRunState,
  type PlanDecision,
  type RunEnded,
} from './agent.contract';
import { userSafeFailure } from './failures';
import { agentRunSearchAttributes, runStatusSearchAttribute } from './search-attributes';
import { runsAsLocalActivity } from './tool-call.contract';

// A model step runs as a local activity; one a stopping worker hands off, as an activity task.
const steps = proxyLocalActivities<Pick<AgentActivities, 'agentStep'>>(MODEL_STEP_LOCAL);
const handedOffSteps = proxyActivities<Pick<AgentActivities, 'agentStep'>>(MODEL_STEP);
const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>(TOOL_CALL);
const localTools = proxyLocalActivities<Pick<ToolsActivities, 'runTool'>>(LOCAL_TOOL_CALL);
const bookkeeping = proxyLocalActivities<Pick<AgentActivities, 'finishRun' | 'expirePlan'>>(RUN_BOOKKEEPING);

/** One agent turn: model steps, tool calls, optional plan approval; its events go with its rows. */
export async function agentRunWorkflow(input: AgentRunInput): Promise<AgentRunOutput> {
  return new Turn(input).run();
}

type RunStatus = AgentRunState['status'];

/** How the turn's own work ended, before the database has had its say. */
type Ending =
  | { ended: RunEnded }
  | { skipped: true }
  | { missing: true }
  | {
      status: 'COMPLETE' | 'FAILED' | 'CANCELLED';
      error: string | null;
      /** The Temporal failure type a FAILED or CANCELLED run ends with. */
      code?: string;
      waitpointStatus?: 'EXPIRED';
    };

class Stop extends Error {}
const CANCELLED = 'The run was cancelled.';
/** How long a run its recorded cancel stopped waits for Temporal's cancel (see temporalCancel). */
const TEMPORAL_CANCEL_WAIT = '5 seconds';

class Turn {
  private readonly live: AgentRunState = {
    status: 'QUEUED',
    step: 0,
    pendingWaitpointId: null,
    runningToolCallIds: [],
  };
  private readonly decisions = new Map<string, PlanDecision>();
  private text = '';
  private readonly contentBlocks: ContentBlock[] = [];
  private readonly messages: ModelMessage[] = [];
  private reported: RunStatus = 'QUEUED';

  constructor(private readonly input: AgentRunInput) {
    setHandler(runStateQuery, () => this.live);
    // Kept by waitpoint, first decision wins: a decision may arrive before the step that opened
    // its waitpoint has even returned, and a duplicate changes nothing.
    setHandler(planDecisionSignal, (d) => {
      if (!this.decisions.has(d.waitpointId)) this.decisions.set(d.waitpointId, d);
    });
  }

  async run(): Promise<AgentRunOutput> {
    let ending: Ending;
    try {
      ending = await this.converse();
    } catch (err) {
      if (err instanceof Stop || isCancellation(err)) ending = { status: 'CANCELLED', error: CANCELLED };
      else {
        const failure = userSafeFailure(err, 'The agent could not finish this turn.');
        ending = { status: 'FAILED', error: failure.message, code: failure.code };
      }
    }
    if ('skipped' in ending) return { status: 'SKIPPED' };
    // Whatever stopped the turn, and whenever: its ending is recorded, and a cancel cannot stop that.
    const ended =
      'ended' in ending
        ? ending.ended
        : 'missing' in ending
          ? null
          : await CancellationScope.nonCancellable(() =>
              bookkeeping.finishRun({
                runId: this.input.runId,
                userId: this.input.userId,
                status: ending.status,
                error: ending.error,
                text: this.text,
                contentBlocks: this.contentBlocks,
                waitpointStatus: ending.waitpointStatus ?? 'CANCELLED',
              }),
            );
    if (!ended) {
      log.warn('The run row is gone; nothing to record or announce.', { runId: this.input.runId });
      throw ApplicationFailure.create({
        type: 'RUN_NOT_FOUND',
        message: 'The run no longer exists.',
        nonRetryable: true,
      });
    }
    this.report(ended.status, ended.status.toLowerCase());
    const code = 'code' in ending ? ending.code : undefined;
    if (ended.status === 'CANCELLED' && code === undefined) await this.temporalCancel();
    if (ended.next && patched(CHAT_QUEUE_PATCH)) return this.continueInto(ended.next);
    return this.end(ended, code);
  }

  /**
   * The ending promoted the chat's next queued turn: this execution continues as new into it, which
   * Temporal does atomically as it closes this one (ContinuedAsNew), so the chat's workflow never
   * has two executions, nor a moment with none. The new execution carries its own run: its memo and
   * search attributes (AgentRunStatus starts again at QUEUED; this one keeps its run's last).
   */
  private continueInto(next: NonNullable<RunEnded['next']>): Promise<never> {
    const { via, metadata, metadataKeywords, ...identity } = next;
    const continueAsNew = makeContinueAsNewFunc<typeof agentRunWorkflow>({
      memo: agentRunMemo(identity.runId, metadata),
      typedSearchAttributes: agentRunSearchAttributes(identity, via, metadataKeywords),
    });
    return continueAsNew({ ...identity, planApprovalTimeoutMs: this.input.planApprovalTimeoutMs });
  }

  /**
   * A run ended CANCELLED by its recorded cancel, which its step heard from PostgreSQL (or met at
   * its start) before Temporal's own cancel reached the workflow: the route sends that next, so the
   * execution waits for it, briefly, and ends Canceled as an API cancel should. Its run is already
   * ended; a cancel Temporal never hears (the route died between the two) costs the chat's next
   * turn this wait at most.
   */
  private async temporalCancel(): Promise<void> {
    const root = CancellationScope.current();
    if (root.consideredCancelled) return;
    let heard = false;
    root.cancelRequested.catch(() => {
      heard = true;
    });
    await CancellationScope.nonCancellable(() => condition(() => heard, TEMPORAL_CANCEL_WAIT));
  }

  /** Temporal's status tells the run's: Completed, Failed with the error code, or Canceled. */
  private end(ended: { status: RunStatus; error: string | null }, code: string | undefined): AgentRunOutput {
    if (ended.status === 'COMPLETE') return { status: 'COMPLETE' };
    const message = ended.error ?? CANCELLED;
    if (ended.status === 'CANCELLED' && CancellationScope.current().consideredCancelled) {
      throw new CancelledFailure(message);
    }
    throw ApplicationFailure.create({
      type: ended.status === 'CANCELLED' ? (code ?? 'RUN_CANCELLED') : (code ?? 'INTERNAL'),
      message,
      nonRetryable: true,
    });
  }

  private async converse(): Promise<Ending> {
    let planApproved = !this.input.planMode;
    // The run's own limit comes with its steps' results (its settings); MAX_MODEL_STEPS until then.
    let limit = MAX_MODEL_STEPS;
    for (let step = 1; step <= limit; step++) {
      this.live.step = step;
      this.report('RUNNING', modelStepActivity(step));
      const options = { summary: modelStepActivity(step) };
      const stepInput = {
        runId: this.input.runId,
        step,
        textSoFar: this.text,
        contentBlocks: this.contentBlocks,
        turnMessages: this.messages,
        ...(planApproved
          ? {}
          : { planWaitpoint: { id: uuid4(), timeoutMs: this.input.planApprovalTimeoutMs } }),
      };
      let result = await steps.agentStep.executeWithOptions(options, [stepInput]);
      // The worker running the local step is stopping: any other worker takes the step from the
      // task queue at once, instead of after this workflow task's timeout. (An activity task
      // never hands off, so this runs once.)
      while (result.kind === 'handoff')
        result = await handedOffSteps.agentStep.executeWithOptions(options, [stepInput]);
      if (result.kind === 'ended') return { ended: result };
      if (result.kind === 'other') return { skipped: true };
      if (result.kind === 'missing') return { missing: true };
      if (result.kind === 'stop') throw new Stop();

      const { reply } = result;
      if (result.maxSteps !== undefined) limit = result.maxSteps;
      this.text = appendText(this.text, reply.text);
      if (reply.text) this.contentBlocks.push({ type: 'text', text: reply.text });
      this.messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls });
      if (result.waitpointId) {
        const refused = await this.awaitPlan(result.waitpointId);
        if (refused) return refused;
        planApproved = true;
      }
      for (const call of reply.toolCalls) this.messages.push(await this.runToolCall(call));
    }
    // The last step still asked for tools: they ran, and the turn ends with what it has.
    return { status: 'COMPLETE', error: null };
  }

  /** Waits for the plan's decision; answers how the run ends when it is not an approval. */
  private async awaitPlan(waitpointId: string): Promise<Ending | undefined> {
    this.live.pendingWaitpointId = waitpointId;
    this.report('WAITING', PLAN_WAIT_ACTIVITY);
    const decided = await condition(() => this.decisions.has(waitpointId), this.input.planApprovalTimeoutMs);
    // The route claims a decision in the database before it signals, so when the timer fires
    // first the database still has the last word: a decision claimed a moment earlier counts.
    const status = decided
      ? this.decisions.get(waitpointId)?.approved
        ? 'APPROVED'
        : 'REJECTED'
      : (await bookkeeping.expirePlan({ waitpointId })).status;
    this.live.pendingWaitpointId = null;
    if (status === 'APPROVED') return undefined;
    if (status === 'REJECTED')
      return { status: 'CANCELLED', error: 'The plan was rejected.', code: 'PLAN_REJECTED' };
    return {
      status: 'CANCELLED',
      error: 'The plan was not approved in time.',
      code: 'PLAN_EXPIRED',
      waitpointStatus: 'EXPIRED',
    };
  }

  private async runToolCall(call: ModelToolCall): Promise<ModelMessage> {
    const toolCallId = uuid4();
    this.contentBlocks.push({ type: 'tool_use', toolCallId, toolName: call.toolName, input: call.input });
    this.live.runningToolCallIds = [toolCallId];
    this.report('RUNNING', call.toolName);
    let result: ToolResult;
    try {
      const runner = runsAsLocalActivity(call.toolName) ? localTools : tools;
      result = await runner.runTool.executeWithOptions({ summary: `${call.toolName} (${toolCallId})` }, [
        {
          toolCallId,
          toolName: call.toolName,
          input: call.input,
          userId: this.input.userId,
          chatId: this.input.chatId,
          runId: this.input.runId,
        },
      ]);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const { code, message: error } = userSafeFailure(err, 'The tool call failed.');
      // A spent budget ends the run (FAILED, BUDGET_EXCEEDED): the model does not go on without it.
      if (code === 'BUDGET_EXCEEDED') throw err;
      this.contentBlocks.push({ type: 'tool_result', toolCallId, toolName: call.toolName, error });
      return {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.toolName,
        content: JSON.stringify({ error }),
      };
    } finally {
      this.live.runningToolCallIds = [];
    }
    this.contentBlocks.push({ type: 'tool_result', toolCallId, toolName: call.toolName, result });
    return { role: 'tool', toolCallId: call.id, toolName: call.toolName, content: JSON.stringify(result) };
  }

  /** The status operators filter on (AgentRunStatus) and what the run is doing now, in the Web UI. */
  private report(status: RunStatus, details: string): void {
    this.live.status = status;
    this.live.activity = details;
    setCurrentDetails(details);
    if (status === this.reported) return;
    this.reported = status;
    upsertSearchAttributes([{ key: runStatusSearchAttribute, value: status }]);
  }
}
