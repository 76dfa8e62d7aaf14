import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, type Duration } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { AgentActivities, FinishInput } from '../../activities/agent';
import type { RunToolInput } from '../../core/tools/types';
import { permanentFailure } from '../../core/errors/failures';
import type { ToolResult } from '../../core/schemas/events';
import {
  planDecisionSignal,
  type AgentRunInput,
  type AgentStepInput,
  type AgentStepResult,
} from '../../workflows/agent.contract';
import type { agentRunWorkflow } from '../../workflows/agent.workflow';
import type { WebhookDeliveryInput } from '../../workflows/webhook-delivery.contract';
import type { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery.workflow';
import { agentRunInput, timeSkippingEnvironment } from '../support/time-skipping';

/**
 * The workflows' own logic, on Temporal's time-skipping test server with every activity mocked:
 * the branches of a turn, its timers (a day's approval timeout passes in an instant), and
 * cancellation. The real activities are proven by the integration suites (test/runs and others).
 */
const DAY_MS = 24 * 3600 * 1000;

const toolResult: ToolResult = {
  toolName: 'ai_image_2',
  output: { url: 'http://files/out.png', provider: 'local-preview' },
  assets: [],
  creditCost: '10',
  durationMs: 5,
  providerRunId: 'p1',
};
const toolReply = (text = 'Drawing.') => ({
  kind: 'tools' as const,
  reply: { text, toolCalls: [{ id: 'c1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }] },
});

/** What one run's mocked activities answer, and what they were called with. */
class Script {
  readonly steps: AgentStepInput[] = [];
  readonly finishes: FinishInput[] = [];
  readonly tools: RunToolInput[] = [];
  readonly expired: string[] = [];
  constructor(
    readonly answers: ((input: AgentStepInput) => Promise<AgentStepResult> | AgentStepResult)[],
    readonly tool: (input: RunToolInput) => Promise<ToolResult> = async () => toolResult,
    readonly expiry: 'APPROVED' | 'REJECTED' | 'EXPIRED' = 'EXPIRED',
  ) {}
}

describe('workflows, with mocked activities on a time-skipping server', function () {
  this.timeout(30_000);
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const scripts = new Map<string, Script>();
  const taskQueue = `unit-${randomUUID()}`;
  const deliveries: { input: WebhookDeliveryInput; attempt: number; local: boolean }[] = [];
  const failedDeliveries: WebhookDeliveryInput[] = [];
  const answeredOk = new Set<string>();
  const refusedForGood = new Set<string>();

  const scriptOf = (runId: string) => {
    const script = scripts.get(runId);
    if (!script) throw new Error(`no script for ${runId}`);
    return script;
  };

  before(async () => {
    env = await timeSkippingEnvironment();
    const activities: Pick<AgentActivities, 'agentStep' | 'finishRun' | 'expirePlan'> &
      Record<string, unknown> = {
      async agentStep(input) {
        const script = scriptOf(input.runId);
        script.steps.push(structuredClone(input));
        const answer = script.answers.shift();
        if (!answer) throw new Error('the script ran out of steps');
        return answer(input);
      },
      async finishRun(input) {
        scriptOf(input.runId).finishes.push(structuredClone(input));
        return { status: input.status, error: input.error };
      },
      async expirePlan({ waitpointId }: { waitpointId: string }) {
        const script = [...scripts.values()].find((s) =>
          s.steps.some((st) => st.planWaitpoint?.id === waitpointId),
        );
        script?.expired.push(waitpointId);
        return { status: script?.expiry ?? 'EXPIRED' };
      },
      async runTool(input: RunToolInput) {
        const script = scriptOf(input.runId ?? '');
        script.tools.push(input);
        return script.tool(input);
      },
      async deliverWebhook(input: WebhookDeliveryInput) {
        const { attempt, isLocal } = Context.current().info;
        deliveries.push({ input, attempt: (input.attemptsBefore ?? 0) + attempt, local: isLocal });
        if (answeredOk.has(input.deliveryId)) return 'DELIVERED';
        if (refusedForGood.has(input.deliveryId))
          throw permanentFailure(
            'WEBHOOK_ENDPOINT_NOT_FOUND',
            'The endpoint was deleted; nothing more is sent.',
          );
        throw new Error('The endpoint answered HTTP 500.');
      },
      async markDeliveryFailed(input: WebhookDeliveryInput) {
        failedDeliveries.push(input);
      },
    };
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities,
    });
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  function start(
    script: Script,
    input: Partial<AgentRunInput> = {},
    options: { workflowTaskTimeout?: Duration } = {},
  ) {
    const runId = randomUUID();
    scripts.set(runId, script);
    return env.client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue,
      workflowId: randomUUID(),
      args: [agentRunInput({ runId, planApprovalTimeoutMs: DAY_MS, ...input })],
      ...options,
    });
  }

  const startDelivery = (input: WebhookDeliveryInput) =>
    env.client.workflow.start<typeof webhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: randomUUID(),
      args: [input],
    });

  /** The failure a workflow ended with: its type and message, or 'Canceled'. */
  async function failureOf(result: Promise<unknown>): Promise<{ type: string; message: string }> {
    const err = await result.then(
      () => assert.fail('the workflow completed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WorkflowFailedError, String(err));
    if (err.cause instanceof CancelledFailure) return { type: 'Canceled', message: err.cause.message };
    assert.ok(err.cause instanceof ApplicationFailure, String(err.cause));
    return { type: err.cause.type ?? '', message: err.cause.message };
  }

  const waitingOn = async (script: Script) => {
    for (;;) {
      const id = script.steps.find((s) => s.planWaitpoint)?.planWaitpoint?.id;
      if (id && script.steps.length) return id;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('completes a plain turn in one step, which ends the run itself', async () => {
    const script = new Script([() => ({ kind: 'ended', status: 'COMPLETE', error: null })]);
    const handle = await start(script);
    assert.deepEqual(await handle.result(), { status: 'COMPLETE' });
    assert.equal(script.steps.length, 1);
    assert.deepEqual(script.finishes, []);
  });

  it('runs the tools a step asks for, then hands the next step the exchange and the blocks so far', async () => {
    const script = new Script([
      () => toolReply(),
      () => ({ kind: 'ended', status: 'COMPLETE', error: null }),
    ]);
    await (await start(script)).result();
    assert.equal(script.tools.length, 1);
    const second = script.steps[1];
    assert.equal(second?.textSoFar, 'Drawing.');
    assert.deepEqual(
      second?.contentBlocks.map((b) => b.type),
      ['text', 'tool_use', 'tool_result'],
    );
    assert.deepEqual(
      second?.turnMessages.map((m) => m.role),
      ['assistant', 'tool'],
    );
  });

  it('gives a failed tool call back to the model as an error, and goes on', async () => {
    const script = new Script(
      [() => toolReply(), () => ({ kind: 'ended', status: 'COMPLETE', error: null })],
      async () => {
        throw permanentFailure('UNSUPPORTED_MEDIA_TYPE', 'That is not an image.');
      },
    );
    await (await start(script)).result();
    const result = script.steps[1]?.contentBlocks.find((b) => b.type === 'tool_result');
    assert.deepEqual(result, {
      type: 'tool_result',
      toolCallId: script.tools[0]?.toolCallId,
      toolName: 'ai_image_2',
      error: 'That is not an image.',
    });
  });

  it('ends COMPLETE with what it has when the last allowed step still asks for tools', async () => {
    const script = new Script(Array.from({ length: 8 }, () => () => toolReply()));
    assert.deepEqual(await (await start(script)).result(), { status: 'COMPLETE' });
    assert.equal(script.tools.length, 8);
    assert.equal(script.finishes[0]?.status, 'COMPLETE');
  });

  describe('plan mode', () => {
    it('asks every step for a plan waitpoint until one is approved, then runs the plan', async () => {
      const script = new Script([
        (input) => ({ ...toolReply(), waitpointId: input.planWaitpoint?.id }),
        () => ({ kind: 'ended', status: 'COMPLETE', error: null }),
      ]);
      const handle = await start(script, { planMode: true });
      const waitpointId = await waitingOn(script);
      await handle.signal(planDecisionSignal, { waitpointId, approved: true });
      assert.deepEqual(await handle.result(), { status: 'COMPLETE' });
      assert.equal(script.tools.length, 1);
      assert.equal(script.steps[1]?.planWaitpoint, undefined, 'an approved plan is not asked for again');
    });

    it('ends a rejected plan CANCELLED, failing with PLAN_REJECTED in Temporal’s terms', async () => {
      const script = new Script([(input) => ({ ...toolReply(), waitpointId: input.planWaitpoint?.id })]);
      const handle = await start(script, { planMode: true });
      await handle.signal(planDecisionSignal, { waitpointId: await waitingOn(script), approved: false });
      assert.deepEqual(await failureOf(handle.result()), {
        type: 'PLAN_REJECTED',
        message: 'The plan was rejected.',
      });
      assert.equal(script.tools.length, 0);
      assert.deepEqual(
        script.finishes.map((f) => [f.status, f.waitpointStatus]),
        [['CANCELLED', 'CANCELLED']],
      );
    });

    it('expires a plan nobody decides after its timeout (a day, skipped), failing with PLAN_EXPIRED', async () => {
      const script = new Script([(input) => ({ ...toolReply(), waitpointId: input.planWaitpoint?.id })]);
      const handle = await start(script, { planMode: true });
      assert.deepEqual(await failureOf(handle.result()), {
        type: 'PLAN_EXPIRED',
        message: 'The plan was not approved in time.',
      });
      assert.equal(script.expired.length, 1);
      assert.deepEqual(
        script.finishes.map((f) => f.waitpointStatus),
        ['EXPIRED'],
      );
    });

    it('goes on with a decision the database holds when the timer fires first', async () => {
      const script = new Script(
        [
          (input) => ({ ...toolReply(), waitpointId: input.planWaitpoint?.id }),
          () => ({ kind: 'ended', status: 'COMPLETE', error: null }),
        ],
        undefined,
        'APPROVED',
      );
      const handle = await start(script, { planMode: true });
      assert.deepEqual(await handle.result(), { status: 'COMPLETE' });
      assert.equal(script.expired.length, 1);
      assert.equal(script.tools.length, 1);
    });
  });

  describe('endings', () => {
    it('ends a run cancelled through Temporal CANCELLED, recorded even as the cancel lands, and Canceled', async () => {
      const script = new Script([
        async () => {
          // A step that streams until it is told to stop.
          await Context.current().cancelled;
          throw new Error('unreachable');
        },
      ]);
      // A model step is a local activity: Temporal's cancel reaches it with its workflow task's
      // next beat, at 80 % of the task's timeout (8 s by default; 1.6 s here). The run's
      // notification, which stops a real step sooner, is the activity's own (test/runs).
      const handle = await start(script, {}, { workflowTaskTimeout: '2 seconds' });
      while (script.steps.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await handle.cancel();
      // Temporal keeps no message with a Canceled execution; the run's row has it.
      assert.equal((await failureOf(handle.result())).type, 'Canceled');
      assert.deepEqual(
        script.finishes.map((f) => [f.status, f.error]),
        [['CANCELLED', 'The run was cancelled.']],
      );
    });

    it('ends a run its step stopped for a recorded cancel Canceled, once Temporal’s own cancel arrives', async () => {
      // The route records the cancel, then tells Temporal: the step (a local activity) hears the
      // first from PostgreSQL and stops while Temporal's cancel is still on its way.
      let cancelSent!: () => void;
      const sent = new Promise<void>((resolve) => (cancelSent = resolve));
      const script = new Script([
        async () => {
          await sent;
          return { kind: 'stop' };
        },
      ]);
      const handle = await start(script);
      while (script.steps.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      await handle.cancel();
      cancelSent();
      assert.equal((await failureOf(handle.result())).type, 'Canceled');
      assert.deepEqual(
        script.finishes.map((f) => [f.status, f.error]),
        [['CANCELLED', 'The run was cancelled.']],
      );
      const events = (await handle.fetchHistory()).events ?? [];
      assert.ok(!events.some((e) => e.workflowTaskFailedEventAttributes), 'no workflow task failed');
    });

    it('ends a run whose cancel was recorded before its step CANCELLED, failing with RUN_CANCELLED', async () => {
      const script = new Script([() => ({ kind: 'stop' })]);
      const handle = await start(script);
      assert.deepEqual(await failureOf(handle.result()), {
        type: 'RUN_CANCELLED',
        message: 'The run was cancelled.',
      });
      assert.equal(script.finishes[0]?.status, 'CANCELLED');
    });

    it('fails a run whose step failed for good with its error code and user-safe message', async () => {
      const script = new Script([
        () => {
          throw permanentFailure('PROVIDER_ERROR', 'The model refused.');
        },
      ]);
      const handle = await start(script);
      assert.deepEqual(await failureOf(handle.result()), {
        type: 'PROVIDER_ERROR',
        message: 'The model refused.',
      });
      assert.deepEqual(
        script.finishes.map((f) => [f.status, f.error]),
        [['FAILED', 'The model refused.']],
      );
    });

    it('hides an unexpected failure behind a safe message, failing with INTERNAL', async () => {
      const script = new Script([
        () => {
          throw ApplicationFailure.nonRetryable('SQL error at position 42', 'SomeBug');
        },
      ]);
      const handle = await start(script);
      assert.deepEqual(await failureOf(handle.result()), {
        type: 'INTERNAL',
        message: 'The agent could not finish this turn.',
      });
    });

    it('does nothing for a run another execution owns, and fails cleanly for a run whose row is gone', async () => {
      const other = new Script([() => ({ kind: 'other' })]);
      assert.deepEqual(await (await start(other)).result(), { status: 'SKIPPED' });
      const missing = new Script([() => ({ kind: 'missing' })]);
      assert.deepEqual(await failureOf((await start(missing)).result()), {
        type: 'RUN_NOT_FOUND',
        message: 'The run no longer exists.',
      });
      assert.deepEqual([...other.finishes, ...missing.finishes], []);
    });
  });

  it('tries a webhook delivery 4 times (1 s, 5 s, 15 s apart, skipped), then marks it FAILED and fails', async () => {
    const input = { deliveryId: randomUUID(), series: 1 };
    const handle = await startDelivery(input);
    assert.deepEqual(await failureOf(handle.result()), {
      type: 'WEBHOOK_DELIVERY_FAILED',
      message: 'The endpoint answered HTTP 500.',
    });
    // The first attempt in the delivery's first workflow task, the rest numbered after it.
    assert.deepEqual(
      deliveries
        .filter((d) => d.input.deliveryId === input.deliveryId)
        .map((d) => [d.attempt, d.local ? 'local' : 'activity']),
      [
        [1, 'local'],
        [2, 'activity'],
        [3, 'activity'],
        [4, 'activity'],
      ],
    );
    assert.deepEqual(failedDeliveries, [input]);
    // The schedule, as the history holds it: 1 s after the first attempt, then 5 s and 15 s apart.
    const events = (await handle.fetchHistory()).events ?? [];
    const timer = events.find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes;
    assert.equal(Number(timer?.startToFireTimeout?.seconds), 1);
    const retry = events.find((e) => e.activityTaskScheduledEventAttributes)
      ?.activityTaskScheduledEventAttributes?.retryPolicy;
    assert.deepEqual(
      [
        Number(retry?.initialInterval?.seconds),
        retry?.backoffCoefficient,
        Number(retry?.maximumInterval?.seconds),
        retry?.maximumAttempts,
      ],
      [5, 3, 15, 3],
    );
  });

  it('delivers in the first workflow task when the first attempt succeeds: no activity, no timer', async () => {
    const input = { deliveryId: randomUUID(), series: 1 };
    answeredOk.add(input.deliveryId);
    const handle = await startDelivery(input);
    assert.equal(await handle.result(), 'DELIVERED');
    const events = (await handle.fetchHistory()).events ?? [];
    assert.equal(events.filter((e) => e.workflowTaskStartedEventAttributes).length, 1);
    assert.ok(!events.some((e) => e.activityTaskScheduledEventAttributes || e.timerStartedEventAttributes));
  });

  it('gives up at once on a first attempt refused for good (a deleted endpoint)', async () => {
    const input = { deliveryId: randomUUID(), series: 1 };
    refusedForGood.add(input.deliveryId);
    const handle = await startDelivery(input);
    assert.deepEqual(await failureOf(handle.result()), {
      type: 'WEBHOOK_DELIVERY_FAILED',
      message: 'The endpoint was deleted; nothing more is sent.',
    });
    assert.equal(deliveries.filter((d) => d.input.deliveryId === input.deliveryId).length, 1);
    assert.ok(failedDeliveries.some((d) => d.deliveryId === input.deliveryId));
  });
});
