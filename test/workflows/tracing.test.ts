import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { agentRunInput, timeSkippingEnvironment } from '../support/time-skipping';
import { Worker } from '@temporalio/worker';
import type { AgentActivities } from '../../activities/agent';
import { workflowObservation } from '../../apps/worker/worker';
import type { Tracing } from '../../core/telemetry/tracing';
import type { agentRunWorkflow } from '../../workflows/agent.workflow';

/**
 * Which executions trace (workflows/interceptors.ts): one whose start carried a trace joins it; one
 * started without a trace loads no tracing at all, on a worker that traces or not. The decision is
 * the start's, so every worker that replays the execution makes it the same way.
 */
describe('workflow tracing', function () {
  this.timeout(60_000);
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  const exporter = new InMemorySpanExporter();
  const taskQueue = `tracing-${randomUUID()}`;
  const tracing: Tracing = {
    resource: new Resource({ 'service.name': 'tracing-test' }),
    processor: new SimpleSpanProcessor(exporter),
    shutdown: async () => undefined,
  };

  before(async () => {
    env = await timeSkippingEnvironment();
    const activities: Pick<AgentActivities, 'agentStep'> = {
      agentStep: async () => ({ kind: 'ended', status: 'COMPLETE', error: null }),
    };
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      activities,
      // The worker traces: whether an execution does is still its start's to say.
      ...workflowObservation(tracing),
    });
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  /** Runs a turn to its end, started by a client that writes `carrier` as the start's trace header. */
  async function turn(carrier: Record<string, string> | undefined) {
    const header: WorkflowClientInterceptor = {
      start: (input, next) =>
        next(
          carrier
            ? {
                ...input,
                headers: { ...input.headers, '_tracer-data': defaultPayloadConverter.toPayload(carrier) },
              }
            : input,
        ),
    };
    const client = new Client({ connection: env.connection, interceptors: { workflow: [header] } });
    const input = agentRunInput();
    const handle = await client.workflow.start<typeof agentRunWorkflow>('agentRunWorkflow', {
      taskQueue,
      workflowId: input.chatId,
      args: [input],
    });
    await handle.result();
    return handle.fetchHistory();
  }

  const tracedTurn = async () => {
    const traceId = randomUUID().replace(/-/g, '');
    const parentSpanId = traceId.slice(0, 16);
    const history = await turn({ traceparent: `00-${traceId}-${parentSpanId}-01` });
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    return { traceId, parentSpanId, history, spans };
  };

  it('joins the trace its start carried: the workflow span is a child of the starter’s', async () => {
    const { parentSpanId, history, spans } = await tracedTurn();
    const run = spans.find((s) => s.name === 'RunWorkflow:agentRunWorkflow');
    assert.ok(
      run,
      `no workflow span among ${exporter
        .getFinishedSpans()
        .map((s) => s.name)
        .join(', ')}`,
    );
    assert.equal(run.parentSpanId, parentSpanId);
    assert.ok(spans.some((s) => s.name === 'StartActivity:agentStep'));
    // A worker that does not trace replays it as the one that ran it, and so does one that does.
    for (const observed of [undefined, tracing])
      await Worker.runReplayHistory(
        { workflowsPath: require.resolve('../../workflows'), ...workflowObservation(observed) },
        history,
      );
  });

  it('traces nothing of an execution whose start carried no trace, with or without the header', async () => {
    const before = exporter.getFinishedSpans().length;
    for (const carrier of [{}, undefined]) await turn(carrier);
    // The spans of a traced turn after them reach the exporter after any of theirs would.
    const { traceId, spans } = await tracedTurn();
    assert.ok(spans.length > 0);
    assert.deepEqual(
      exporter
        .getFinishedSpans()
        .slice(before)
        .filter((s) => s.spanContext().traceId !== traceId)
        .map((s) => s.name),
      [],
    );
  });
});
