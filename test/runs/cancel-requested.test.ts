import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../../core/config/config';
import type { ModelReply } from '../../core/model/types';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';

interface Snapshot {
  status: string;
  cancelRequestedAt?: string | null;
  waitpoints: { id: string; status: string; resolvedAt: string | null }[];
}
type Ids = { chatId: string; runId: string };

const planReply = (): ModelReply => ({
  text: 'I will draw a cat.',
  toolCalls: [{ id: 'call_1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
});

/**
 * A cancel recorded on a run that has not stopped yet (here: its plan waiting, and no worker to
 * carry the cancel out until the test starts one): the snapshot says so at once (cancelRequestedAt,
 * the pending plan CANCELLED), and MCP's wait_for_run waits for the run's CANCELLED end instead of
 * answering at once as if the plan still waited for a decision.
 */
describe('a run whose cancel is recorded but not yet carried out', function () {
  this.timeout(120_000);
  let config: Config;
  let gateway: TestGateway;
  let worker: TestWorker | undefined;
  let user: TestUser;
  const model = new ScriptedModel([]);

  before(async () => {
    config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `cancel-requested-${randomUUID()}` });
    worker = await startWorker({ config, deps: { model } });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  // A test that failed midway may have left no worker running.
  beforeEach(async () => {
    worker ??= await startWorker({ config, deps: { model } });
  });
  after(async () => {
    await worker?.stop();
    await gateway?.close();
  });

  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Snapshot & { code?: string } };
  };
  const runPath = (ids: Ids) => `/api/v1/chats/${ids.chatId}/runs/${ids.runId}`;

  /** A plan-mode run waiting for its decision, with the worker then stopped. */
  async function waitingRunWithoutWorker(): Promise<Ids & { waitpointId: string }> {
    model.replies.push(planReply());
    const sent = await rest('POST', '/api/v1/completions', { text: 'draw a cat', planMode: true });
    assert.equal(sent.status, 202);
    const { chatId, runId } = sent.body as unknown as Ids;
    const ids = { chatId, runId };
    const waiting = await waitFor(
      async () => {
        const { body } = await rest('GET', runPath(ids));
        return body.waitpoints[0]?.status === 'PENDING' ? body : undefined;
      },
      { what: 'the plan to wait for its decision' },
    );
    await worker?.stop();
    worker = undefined;
    return { ...ids, waitpointId: waiting.waitpoints[0]!.id };
  }

  it('REST: the 202 and every poll show the recorded cancel, and the run then ends CANCELLED', async () => {
    const ids = await waitingRunWithoutWorker();
    const cancelled = await rest('POST', `${runPath(ids)}/cancel`);
    assert.equal(cancelled.status, 202);
    const at = cancelled.body.cancelRequestedAt;
    assert.ok(at && !Number.isNaN(Date.parse(at)), `cancelRequestedAt: ${String(at)}`);
    // The status stays one the spec's state machine allows until the run has stopped.
    assert.equal(cancelled.body.status, 'WAITING');
    assert.deepEqual(
      cancelled.body.waitpoints.map((w) => [w.status, w.resolvedAt]),
      [['CANCELLED', at]],
    );
    const polled = await rest('GET', runPath(ids));
    assert.equal(polled.body.cancelRequestedAt, at);
    assert.equal(polled.body.waitpoints[0]?.status, 'CANCELLED');
    const late = await rest('POST', `${runPath(ids)}/waitpoints/${ids.waitpointId}/complete`, {
      approved: true,
    });
    assert.equal(late.status, 409);
    assert.equal(late.body.code, 'RUN_NOT_ACTIVE');

    worker = await startWorker({ config, deps: { model } });
    const ended = await waitFor(
      async () => {
        const { body } = await rest('GET', runPath(ids));
        return body.status === 'CANCELLED' ? body : undefined;
      },
      { what: 'the run to end CANCELLED' },
    );
    // The plan was decided when the cancel was recorded, and stays as it read.
    assert.equal(ended.cancelRequestedAt, at);
    assert.deepEqual(
      ended.waitpoints.map((w) => [w.status, w.resolvedAt]),
      [['CANCELLED', at]],
    );
  });

  it('MCP: cancel_run answers the recorded cancel, and wait_for_run waits for the CANCELLED end', async () => {
    const client = new Client({ name: 'cancel-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: user.bearer },
      }),
    );
    await client.listTools();
    try {
      const call = async (name: string, args: Record<string, unknown>, onprogress?: () => void) =>
        (
          (await client.callTool(
            { name, arguments: args },
            undefined,
            onprogress ? { onprogress, resetTimeoutOnProgress: true } : {},
          )) as CallToolResult
        ).structuredContent as unknown as Snapshot;

      const { waitpointId: _waitpoint, ...ids } = await waitingRunWithoutWorker();
      const cancelled = await call('cancel_run', ids);

      // The wait's first read (its progress: the run's text) comes before a worker can end the run.
      let restarting: Promise<TestWorker> | undefined;
      const waited = await call('wait_for_run', { ...ids, timeoutSeconds: 60 }, () => {
        restarting ??= startWorker({ config, deps: { model } });
      });
      assert.ok(restarting, 'the wait read the run before it ended');
      worker = await restarting;
      assert.equal(waited.status, 'CANCELLED', JSON.stringify(waited));
      assert.ok(cancelled.cancelRequestedAt, JSON.stringify(cancelled));
      assert.equal(cancelled.waitpoints[0]?.status, 'CANCELLED');
      assert.equal(waited.cancelRequestedAt, cancelled.cancelRequestedAt);
    } finally {
      await client.close();
    }
  });
});
