import {
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentActivities } from '../../activities/agent';
import type { AgentV1Activities } from '../../activities/agent-v1';
import type { ToolsActivities } from '../../activities/tools';
import type { WebhooksActivities } from '../../activities/webhooks';
import type { AgentEventData, ToolResult } from '../../core/schemas/events';
import type { ContentBlock, Plan } from '../../core/schemas/runs';
import type { ModelMessage, ModelToolCall } from '../../core/model/types';
import {
  MAX_MODEL_STEPS,
  planDecisionSignal,
  runStateQuery,
  type AgentRunInput,
  type AgentRunOutput,
  type AgentRunState,
  type PlanDecision,
} from '../agent.contract';
import { BOOKKEEPING, MODEL_STEP, TOOL_CALL } from '../activity-options';
import { userSafeFailure } from '../failures';

const userSafeMessage = (err: unknown, fallback: string) => userSafeFailure(err, fallback).message;

const agent = proxyActivities<AgentV1Activities & Pick<AgentActivities, 'finishRun'>>(BOOKKEEPING);
const tools = proxyActivities<Pick<ToolsActivities, 'runTool'>>(TOOL_CALL);
const webhooks = proxyActivities<Pick<WebhooksActivities, 'emitWebhookEvent'>>(BOOKKEEPING);

class RunCancelled extends Error {}

/**
 * The agent workflow as it was before the turn-v2 patch (see ../agent.workflow.ts), frozen: runs
 * started by it replay, and go on, exactly as they began. Delete it, with the activities only it
 * calls (activities/agent-v1.ts), once no execution without the turn-v2 marker is open:
 * `temporal workflow count --query "WorkflowType='agentRunWorkflow' AND ExecutionStatus='Running'
 * AND StartTime < '<deploy time of turn-v2>'"` answers 0.
 */
export async function agentRunWorkflowV1(input: AgentRunInput): Promise<AgentRunOutput> {
  const state: AgentRunState = {
    status: 'RUNNING',
    step: 0,
    pendingWaitpointId: null,
    runningToolCallIds: [],
  };
  let decision: PlanDecision | undefined;
  setHandler(runStateQuery, () => state);
  setHandler(planDecisionSignal, (d) => {
    // Duplicate and late decisions change nothing: only the first for the open waitpoint counts.
    if (d.waitpointId === state.pendingWaitpointId && !decision) decision = d;
  });

  const eventData = (status: AgentEventData['status'], error?: string): AgentEventData => ({
    chatId: input.chatId,
    runId: input.runId,
    messageId: input.messageId,
    traceId: input.traceId,
    processId: workflowInfo().runId,
    status,
    assistantMessageId: input.assistantMessageId,
    ...(error === undefined ? {} : { error }),
  });

  const started = await agent.markRunStarted({ runId: input.runId });
  if (started === 'NOT_QUEUED') return { status: 'CANCELLED' };

  const contentBlocks: ContentBlock[] = [];
  let text = '';
  try {
    if (started === 'CANCEL_REQUESTED') throw new RunCancelled();
    await webhooks.emitWebhookEvent({
      userId: input.userId,
      event: 'agent.started',
      idempotencyKey: input.runId,
      data: eventData('QUEUED'),
    });

    const messages: ModelMessage[] = await agent.loadHistory({ runId: input.runId });
    let planApproved = !input.planMode;
    for (let step = 1; step <= MAX_MODEL_STEPS; step++) {
      state.step = step;
      const reply = await agent.callModel.executeWithOptions(
        { ...MODEL_STEP, summary: `model step ${step}` },
        [{ runId: input.runId, step, messages, textSoFar: text ? `${text}\n\n` : '' }],
      );
      if (reply.text) {
        text = text ? `${text}\n\n${reply.text}` : reply.text;
        contentBlocks.push({ type: 'text', text: reply.text });
      }
      messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls });
      if (reply.toolCalls.length === 0) break;

      if (!planApproved) {
        const approved = await awaitPlanApproval(reply.text, reply.toolCalls);
        if (!approved) throw new RunCancelled();
        planApproved = true;
      }
      for (const call of reply.toolCalls) {
        messages.push(await runToolCall(call));
      }
    }

    await agent.finishRun({
      runId: input.runId,
      status: 'COMPLETE',
      text,
      contentBlocks,
      error: null,
    });
    state.status = 'COMPLETE';
    await webhooks.emitWebhookEvent({
      userId: input.userId,
      event: 'agent.completed',
      idempotencyKey: input.runId,
      data: eventData('COMPLETE'),
    });
    return { status: 'COMPLETE' };
  } catch (err) {
    const cancelled = err instanceof RunCancelled || isCancellation(err);
    const status = cancelled ? 'CANCELLED' : 'FAILED';
    const error = cancelled
      ? 'The run was cancelled.'
      : userSafeMessage(err, 'The agent could not finish this turn.');
    // Cancellation of the workflow must not stop the bookkeeping that records it.
    await CancellationScope.nonCancellable(async () => {
      await agent.finishRun({ runId: input.runId, status, text, contentBlocks, error });
      state.status = status;
      await webhooks.emitWebhookEvent({
        userId: input.userId,
        event: 'agent.failed',
        idempotencyKey: input.runId,
        data: eventData(status, cancelled ? undefined : error),
      });
    });
    return { status, error };
  }

  async function awaitPlanApproval(summary: string, calls: ModelToolCall[]): Promise<boolean> {
    const plan: Plan = {
      summary: summary.trim() || `Run ${calls.length} tool call${calls.length === 1 ? '' : 's'}.`,
      steps: calls.map((c) => ({
        toolName: c.toolName,
        input: c.input,
        reason: `Requested by the agent for step ${state.step}.`,
      })),
    };
    const waitpointId = uuid4();
    // Listening before the row exists: an approver can see the row, and send its decision, before
    // this workflow has even heard that the activity completed; a decision must not be lost there.
    state.pendingWaitpointId = waitpointId;
    await agent.openPlanWaitpoint({
      runId: input.runId,
      waitpointId,
      plan,
      timeoutMs: input.planApprovalTimeoutMs,
    });
    state.status = 'WAITING';
    const decided = await condition(() => decision !== undefined, input.planApprovalTimeoutMs);
    // The route claims the decision in the database before signalling, so the database has the
    // last word: a decision that raced the timer, or whose signal was lost, is read back here.
    const outcome = decided
      ? { status: decision?.approved ? ('APPROVED' as const) : ('REJECTED' as const) }
      : await agent.expireWaitpoint({ runId: input.runId, waitpointId });
    state.pendingWaitpointId = null;
    if (outcome.status !== 'APPROVED') return false;
    state.status = 'RUNNING';
    await agent.resumeRun({ runId: input.runId });
    return true;
  }

  async function runToolCall(call: ModelToolCall): Promise<ModelMessage> {
    const toolCallId = uuid4();
    contentBlocks.push({ type: 'tool_use', toolCallId, toolName: call.toolName, input: call.input });
    state.runningToolCallIds = [toolCallId];
    let result: ToolResult;
    try {
      result = await tools.runTool.executeWithOptions({ summary: `${call.toolName} (${toolCallId})` }, [
        {
          toolCallId,
          toolName: call.toolName,
          input: call.input,
          userId: input.userId,
          chatId: input.chatId,
          runId: input.runId,
        },
      ]);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const error = userSafeMessage(err, 'The agent could not finish this turn.');
      contentBlocks.push({ type: 'tool_result', toolCallId, toolName: call.toolName, error });
      return {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.toolName,
        content: JSON.stringify({ error }),
      };
    } finally {
      state.runningToolCallIds = [];
    }
    contentBlocks.push({ type: 'tool_result', toolCallId, toolName: call.toolName, result });
    await webhooks.emitWebhookEvent({
      userId: input.userId,
      event: 'tool.completed',
      idempotencyKey: toolCallId,
      data: { ...result, toolCallId, chatId: input.chatId, runId: input.runId },
    });
    return { role: 'tool', toolCallId: call.id, toolName: call.toolName, content: JSON.stringify(result) };
  }
}
