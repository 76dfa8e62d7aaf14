import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { createTemporalClient } from '../../core/temporal/connection';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

/**
 * A poll costs one indexed read: however many clients poll a live run, through however many
 * gateways, its workflow is asked at most once a second, and a poll that finds nothing changed
 * answers 304.
 */
describe('polling a run', function () {
  this.timeout(60_000);
  const gateways: TestGateway[] = [];
  let worker: TestWorker;
  const queries: string[] = [];
  const model = new ScriptedModel([]);

  before(async () => {
    const stack = await testStack();
    // Polling as fast as it can for seconds is the point here, not the API's rate limit.
    const config = stack.config({
      TEMPORAL_TASK_QUEUE: `polls-${randomUUID()}`,
      API_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    worker = await startWorker({ config, deps: { model } });
    // Two gateways, each with a Temporal client counting the queries it sends.
    for (let i = 0; i < 2; i++) {
      const temporal = createTemporalClient({
        address: stack.temporalAddress,
        namespace: config.TEMPORAL_NAMESPACE,
      });
      const getHandle = temporal.client.workflow.getHandle.bind(temporal.client.workflow);
      temporal.client.workflow.getHandle = ((...args: Parameters<Client['workflow']['getHandle']>) => {
        const handle = getHandle(...args);
        const query = handle.query.bind(handle);
        handle.query = ((...q: Parameters<typeof query>) => {
          queries.push(args[0]);
          return query(...q);
        }) as typeof query;
        return handle;
      }) as typeof temporal.client.workflow.getHandle;
      gateways.push(await startGateway({ config, deps: { temporal } }));
    }
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await worker.stop();
  });

  it('asks the workflow at most once a second for polls over two gateways, and answers 304 while nothing changes', async () => {
    const user = await createTestUser();
    model.replies.push({ text: 'A long answer, streamed in two halves.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const sent = await fetch(`${gateways[0]!.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ text: 'hello' }),
    });
    const turn = (await sent.json()) as { chatId: string; runId: string };
    const path = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}`;
    let next = 0;
    // Each poll goes to the other gateway than the one before.
    const poll = (headers: Record<string, string> = {}) =>
      fetch(`${gateways[next++ % gateways.length]!.url}${path}`, { headers: { ...user.bearer, ...headers } });
    const first = await waitFor(async () => {
      const res = await poll();
      const body = (await res.json()) as { status: string; text: string; activity: string | null };
      return body.status === 'RUNNING' && body.text && body.activity ? { res, body } : undefined;
    });
    assert.equal(first.body.activity, 'model step 1');
    const etag = first.res.headers.get('etag');
    assert.ok(etag, 'a snapshot carries an ETag');

    // Polls for three seconds, ten at a time, alternating gateways: a cache per gateway would ask
    // twice a second, a shared one once.
    queries.splice(0);
    const started = Date.now();
    const answers: Response[] = [];
    while (Date.now() - started < 3_000) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, () => poll({ 'if-none-match': etag })))));
    }
    const seconds = (Date.now() - started) / 1000;
    assert.ok(
      queries.length <= Math.ceil(seconds) + 1,
      `${queries.length} queries for ${answers.length} polls in ${seconds.toFixed(2)} s`,
    );
    assert.ok(
      answers.every((r) => r.status === 304),
      `statuses: ${[...new Set(answers.map((r) => r.status))].join(', ')}`,
    );

    model.release();
    const done = await waitFor(async () => {
      const res = await poll({ 'if-none-match': etag });
      if (res.status === 304) return undefined;
      const body = (await res.json()) as { status: string };
      return body.status === 'COMPLETE' ? res : undefined;
    });
    assert.equal(done.status, 200, 'a changed run answers in full');
  });
});
