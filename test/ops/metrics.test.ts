import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOperatorPort } from '../../apps/gateway/operator';
import { startWorkerHttp } from '../../apps/worker/http';
import { createLogger } from '../../core/logging/logger';
import { startGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { ScriptedModel } from '../support/scripted-model';
import { metricNames, sampleSum } from '../support/prometheus';
import { createWebhookEndpoint } from '../support/webhooks';
import { waitFor } from '../support/wait';
import { drawReply, startReceiver, startService, terminal, type Service } from './support';

const TOKEN = 'metrics-token-0123456789';

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Metrics that move when work happens: scrape, act, scrape. */
describe('metrics', function () {
  this.timeout(120_000);
  const model = new ScriptedModel([]);
  let service: Service;
  let operator: Server;
  let workerHttp: Server;
  const scrape = async (base: string) => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    return res.text();
  };

  before(async () => {
    service = await startService({ model, config: { METRICS_TOKEN: TOKEN } });
    operator = await startOperatorPort(service.gateway.ops, service.gateway.deps.config, {
      port: 0,
      host: '127.0.0.1',
    });
    workerHttp = await startWorkerHttp({
      port: 0,
      host: '127.0.0.1',
      token: TOKEN,
      worker: service.worker.worker,
      db: service.worker.deps.db,
      connection: service.worker.connection,
      sdkMetricsUrl: (await testStack()).sdkMetricsUrl,
      logger: createLogger({ level: 'silent', name: 'metrics-test' }),
    });
  });
  after(async () => {
    operator.closeAllConnections();
    operator.close();
    workerHttp.closeAllConnections();
    workerHttp.close();
    await service.close();
  });

  it('asks for METRICS_TOKEN on /metrics and /health/details, and not on the worker’s probes', async () => {
    for (const path of ['/metrics', '/health/details']) {
      const none = await fetch(`${urlOf(operator)}${path}`);
      assert.equal(none.status, 401, path);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      const wrong = await fetch(`${urlOf(operator)}${path}`, {
        headers: { authorization: `Bearer ${TOKEN}x` },
      });
      assert.equal(wrong.status, 401, path);
    }
    assert.equal((await fetch(`${urlOf(workerHttp)}/metrics`)).status, 401);
    assert.equal((await fetch(`${urlOf(workerHttp)}/healthz`)).status, 200);
    const ready = await fetch(`${urlOf(workerHttp)}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), {
      status: 'ready',
      database: 'up',
      temporal: 'up',
      worker: 'RUNNING',
    });
    assert.equal((await fetch(`${urlOf(operator)}/nothing`)).status, 404);
    assert.equal((await fetch(`${urlOf(operator)}/metrics`, { method: 'POST' })).status, 405);
  });

  it('counts admissions, request durations by route and status, 409s and 429s on the gateway', async () => {
    const before = await scrape(urlOf(operator));
    model.replies.push({ text: 'Hello.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const turn = await service.send({ text: 'hello' });
    // A second send into the chat while its run is active: 409 RUN_ACTIVE.
    const conflict = await fetch(`${service.gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...service.user.bearer },
      body: JSON.stringify({ text: 'again', chatId: turn.chatId }),
    });
    assert.equal(conflict.status, 409);
    model.release();
    await service.until(turn, terminal, 'the run');
    const after = await scrape(urlOf(operator));

    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    assert.equal(delta('agent_runs_admitted_total', { plan_mode: 'false' }), 1);
    assert.equal(
      delta('agent_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/v1/completions',
        status: '202',
      }),
      1,
    );
    assert.ok(
      delta('agent_http_request_duration_seconds_count', {
        route: '/api/v1/chats/:chatId/runs/:runId',
        status: '200',
      }) >= 1,
      'the polls are counted under their route pattern, not their path',
    );
    assert.equal(delta('agent_http_errors_total', { status: '409', code: 'RUN_ACTIVE' }), 1);
    assert.ok(!after.includes(turn.chatId), 'no id becomes a label');

    // 429: a gateway whose key may make one call a minute.
    const strict = await startGateway({
      config: (await testStack()).config({ API_RATE_LIMIT_PER_MINUTE: '1' }),
    });
    try {
      const before429 = await scrape(urlOf(operator));
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await fetch(`${strict.url}/api/v1/chats`, { headers: service.user.bearer })).status);
      assert.ok(statuses.includes(429), `statuses ${statuses.join(', ')}`);
      const after429 = await scrape(urlOf(operator));
      assert.equal(
        sampleSum(after429, 'agent_http_errors_total', { status: '429', code: 'RATE_LIMITED' }) -
          sampleSum(before429, 'agent_http_errors_total', { status: '429', code: 'RATE_LIMITED' }),
        statuses.filter((s) => s === 429).length,
      );
    } finally {
      await strict.close();
    }
  });

  it('shows the task queue’s pollers in a metric and in /health/details', async () => {
    const queue = service.gateway.deps.config.TEMPORAL_TASK_QUEUE;
    const text = await scrape(urlOf(operator));
    assert.ok(sampleSum(text, 'agent_task_queue_pollers', { task_queue: queue, type: 'workflow' }) >= 1);
    assert.ok(sampleSum(text, 'agent_task_queue_pollers', { task_queue: queue, type: 'activity' }) >= 1);
    assert.ok(sampleSum(text, 'agent_task_queue_last_poll_age_seconds', { task_queue: queue }) < 120);
    const details = await fetch(`${urlOf(operator)}/health/details`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(details.status, 200);
    const body = (await details.json()) as {
      status: string;
      taskQueue: { name: string; workflowPollers: { identity: string }[]; activityPollers: unknown[] };
    };
    assert.equal(body.status, 'ready');
    assert.equal(body.taskQueue.name, queue);
    assert.ok(body.taskQueue.workflowPollers.some((p) => p.identity.length > 0));

    // A task queue nobody polls: sends are still admitted (readiness ignores workers), and it shows.
    const lonely = await startGateway({
      config: (await testStack()).config({ TEMPORAL_TASK_QUEUE: `nobody-${Date.now()}` }),
    });
    try {
      assert.equal((await fetch(`${lonely.url}/readyz`)).status, 200);
      const pollers = await lonely.ops.health.taskQueue();
      assert.deepEqual(pollers?.workflowPollers, []);
      assert.deepEqual(pollers?.activityPollers, []);
    } finally {
      await lonely.close();
    }
  });

  it('counts model steps, tool calls, activities and webhook deliveries on the worker, after the SDK’s own', async () => {
    const receiver = await startReceiver();
    await createWebhookEndpoint(service.gateway.url, service.user, receiver.url, ['agent.completed']);
    const before = await scrape(urlOf(workerHttp));
    for (const name of ['temporal_num_pollers', 'temporal_workflow_task_schedule_to_start_latency_seconds'])
      assert.ok(metricNames(before).has(name), `the SDK's ${name} is served`);

    model.replies.push(drawReply(), { text: 'Here it is.', toolCalls: [] });
    const turn = await service.send({ text: 'draw' });
    assert.equal((await service.until(turn, terminal, 'the run')).status, 'COMPLETE');
    await waitFor(async () => (receiver.posts.length ? true : undefined), { what: 'the delivery' });
    const after = await waitFor(
      async () => {
        const text = await scrape(urlOf(workerHttp));
        return sampleSum(text, 'agent_webhook_deliveries_total', { outcome: 'delivered' }) >
          sampleSum(before, 'agent_webhook_deliveries_total', { outcome: 'delivered' })
          ? text
          : undefined;
      },
      { what: 'the delivery to be counted' },
    );
    const delta = (name: string, labels: Record<string, string>) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    assert.equal(
      delta('agent_model_step_duration_seconds_count', { provider: 'scripted', outcome: 'ok' }),
      2,
    );
    assert.equal(
      delta('agent_tool_call_duration_seconds_count', { tool: 'ai_image_2', outcome: 'succeeded' }),
      1,
    );
    assert.equal(
      delta('agent_activity_duration_seconds_count', { activity: 'agentStep', outcome: 'completed' }),
      2,
    );
    assert.equal(
      delta('agent_activity_duration_seconds_count', { activity: 'runTool', outcome: 'completed' }),
      1,
    );
    assert.equal(delta('agent_webhook_attempts_total', { outcome: 'delivered' }), 1);
    assert.ok(
      delta('temporal_local_activity_execution_latency_seconds_count', { activity_type: 'agentStep' }) >= 2,
      'the SDK counts the same work',
    );
    receiver.server.close();
  });
});
