import assert from 'node:assert/strict';
import { ROOT_CONTEXT, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  currentTraceId,
  inTrace,
  serviceTracer,
  startTracing,
  type Tracing,
} from '../../core/telemetry/tracing';
import { testStack } from '../../testkit/stack';
import { ScriptedModel } from '../support/scripted-model';
import { createWebhookEndpoint } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { drawReply, startReceiver, startService, terminal, type Service } from './support';

/**
 * One trace from the send to the webhook receiver: the gateway's request span, the workflow, its
 * model steps and tool call, the delivery's POST (carrying traceparent) and the receiver's span,
 * all with the trace id the run's events carry.
 */
describe('tracing', function () {
  this.timeout(120_000);
  const exporter = new InMemorySpanExporter();
  const model = new ScriptedModel([]);
  let tracing: Tracing;
  let service: Service;

  before(async () => {
    tracing = startTracing({ serviceName: 'trace-test', exporter }) as Tracing;
    service = await startService({ model, tracing });
  });
  const traceIdOfRun = async (runId: string) =>
    (
      await (
        await testStack()
      ).db.pool.query<{ traceId: string }>(`SELECT "traceId" FROM "Run" WHERE id = $1`, [runId])
    ).rows[0]?.traceId;
  after(async () => {
    await service.close();
    await tracing.shutdown();
  });

  it('is off unless the OTEL_* variables ask for it', () => {
    assert.equal(startTracing({ serviceName: 'x', env: {} }), undefined);
    assert.equal(startTracing({ serviceName: 'x', env: { OTEL_TRACES_EXPORTER: 'none' } }), undefined);
    assert.equal(
      startTracing({
        serviceName: 'x',
        env: { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' },
      }),
      undefined,
    );
    assert.throws(
      () => startTracing({ serviceName: 'x', env: { OTEL_TRACES_EXPORTER: 'zipkin' } }),
      /OTEL_TRACES_EXPORTER/,
    );
  });

  it('runs one trace from the send through the workflow, model steps, tool call and webhook POST', async () => {
    const receiver = await startReceiver((post) => {
      // The receiver joins the trace its traceparent names, as an instrumented receiver would.
      const parent = propagation.extract(ROOT_CONTEXT, post.headers);
      serviceTracer().startSpan('webhook receiver', { kind: SpanKind.SERVER }, parent).end();
    });
    await createWebhookEndpoint(service.gateway.url, service.user, receiver.url, ['agent.completed']);
    model.replies.push(drawReply(), { text: 'Here it is.', toolCalls: [] });
    const turn = await service.send({ text: 'draw' });
    const ended = await service.until(turn, terminal, 'the run');
    assert.equal(ended.status, 'COMPLETE');
    const post = await waitFor(async () => receiver.posts[0], { what: 'the webhook POST' });
    const event = JSON.parse(post.body) as { data: { traceId: string } };
    assert.match(String(post.headers.traceparent), /^00-[\da-f]{32}-[\da-f]{16}-01$/);

    const traceId = await traceIdOfRun(turn.runId);
    assert.equal(event.data.traceId, traceId, "the event's traceId is the run's");
    const names = (spans: ReadableSpan[]) => spans.map((s) => s.name);
    const spans = await waitFor(
      async () => {
        const mine = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
        const all = names(mine);
        return [
          'POST /api/v1/completions',
          'StartWorkflow:agentRunWorkflow',
          'RunWorkflow:agentRunWorkflow',
          'RunActivity:agentStep',
          'RunActivity:runTool',
          'StartWorkflow:webhookDeliveryWorkflow',
          'RunWorkflow:webhookDeliveryWorkflow',
          'RunActivity:deliverWebhook',
          'webhook receiver',
        ].every((n) => all.includes(n))
          ? mine
          : undefined;
      },
      { what: `every span of trace ${traceId}: ${names(exporter.getFinishedSpans()).join(', ')}` },
    );
    const request = spans.find((s) => s.name === 'POST /api/v1/completions');
    assert.equal(request?.kind, SpanKind.SERVER);
    assert.equal(request?.attributes['http.response.status_code'], 202);
    assert.equal(request?.parentSpanId, undefined, 'the request span starts the trace');
    assert.equal(names(spans).filter((n) => n === 'RunActivity:agentStep').length, 2, 'one per model step');
    receiver.server.close();
  });

  it('starts what the dispatcher starts in the run’s own trace', () => {
    const traceId = 'a'.repeat(32);
    assert.equal(
      inTrace(traceId, () => currentTraceId()),
      traceId,
    );
    const span = serviceTracer().startSpan('request');
    const inRequest = context.with(trace.setSpan(context.active(), span), () =>
      inTrace(traceId, () => currentTraceId()),
    );
    span.end();
    assert.equal(inRequest, span.spanContext().traceId, 'a span in progress keeps its trace');
  });

  it('continues the caller’s traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    model.replies.push({ text: 'Hi.', toolCalls: [] });
    const turn = await service.send({ text: 'hi' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    await service.until(turn, terminal, 'the run');
    assert.equal(await traceIdOfRun(turn.runId), traceId);
    await waitFor(
      async () =>
        exporter
          .getFinishedSpans()
          .some((s) => s.spanContext().traceId === traceId && s.name === 'RunActivity:agentStep')
          ? true
          : undefined,
      { what: 'the model step in the caller’s trace' },
    );
  });
});
