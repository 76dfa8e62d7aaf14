import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { permanentFailure } from '../../core/errors/failures';
import type { ModelReply } from '../../core/model/types';
import { resolveTemporalCli } from '../../apps/stack/embedded/temporal-cli';
import { createTestUser } from '../../testkit/users';
import { startGateway } from '../../testkit/gateway';
import { stopTestStack, testStack } from '../../testkit/stack';
import { quadrantImage, startMediaServer } from '../support/fake-providers';
import { ScriptedModel, TestLanguageModel, type TestModelRequest } from '../support/scripted-model';
import { waitFor } from '../support/wait';
import { startWorker } from '../../testkit/worker';

/**
 * Records a workflow history for every path a run, a tool call and a delivery can take, for the
 * replay test (test/replay/replay.test.ts), as `<version>-<path>.json`. The corpus starts at 1.0
 * (`npx tsx test/replay/record-histories.ts 1.0`); when a workflow changes, record the new code's
 * histories under its version beside the old ones, which stay, since runs written by the old code
 * may still be in flight when the new code starts. Then `npx prettier --write
 * test/replay/histories` (the lint checks their format).
 */
type Step = ModelReply | { fail: string } | { hold: true; reply: ModelReply };

/** Each call takes the next step: a reply, a permanent failure, or a reply held until cancelled. */
class RecordingModel extends TestLanguageModel {
  override readonly provider = 'recording';
  readonly steps: Step[] = [];

  async complete(request: TestModelRequest): Promise<ModelReply> {
    const step = this.steps.shift() ?? { text: 'done', toolCalls: [] };
    if ('fail' in step) throw permanentFailure('PROVIDER_ERROR', step.fail);
    if ('hold' in step) {
      request.onText(step.reply.text);
      await new Promise<never>((_, reject) =>
        request.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true }),
      );
    }
    const reply = step as ModelReply;
    request.onText(reply.text);
    return reply;
  }
}

async function main(): Promise<void> {
  const version = process.argv[2];
  if (!version) throw new Error('usage: record-histories.ts <version, e.g. 1.1>');
  const out = path.join(__dirname, 'histories');
  await mkdir(out, { recursive: true });

  const stack = await testStack();
  const model = new RecordingModel();
  const settings = { PLAN_APPROVAL_TIMEOUT: '2s', IMAGE_PROVIDER: 'local-preview' };
  const config = stack.config({ ...settings, TEMPORAL_TASK_QUEUE: `record-${randomUUID()}` });
  const worker = await startWorker({ config, model });
  const gateway = await startGateway({ config });
  const user = await createTestUser();

  // A receiver that fails every first attempt, so the delivery history holds a retry; at /down it
  // fails every attempt, so the delivery gives up; at /ok it takes every one.
  const seen = new Set<string>();
  const receiver = createServer((req, res) => {
    const id = String(req.headers['x-svc-delivery-id']);
    req.resume();
    res.statusCode = req.url === '/ok' || (seen.has(id) && req.url !== '/down') ? 200 : 500;
    seen.add(id);
    res.end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const hookUrl = `${receiverUrl}/hook`;

  const call = async (
    method: string,
    route: string,
    body?: object,
    headers: object = user.bearer,
    base = gateway.url,
  ) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  };
  const send = async (body: object) =>
    (await call('POST', '/api/v1/completions', body)) as { chatId: string; runId: string };
  const snapshot = (t: { chatId: string; runId: string }) =>
    call('GET', `/api/v1/chats/${t.chatId}/runs/${t.runId}`) as Promise<{
      status: string;
      waitpoints: { id: string; status: string }[];
    }>;
  const until = (
    t: { chatId: string; runId: string },
    accept: (s: Awaited<ReturnType<typeof snapshot>>) => boolean,
  ) =>
    waitFor(
      async () => {
        const s = await snapshot(t);
        return accept(s) ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'the run' },
    );
  const terminal = (s: { status: string }) => ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status);

  /** The history of the workflow's latest execution, or of execution `runId` when given. */
  const show = async (workflowId: string, runId?: string) => {
    // Wait for the execution (and any it continued as new into) to close, then take the JSON the
    // Web UI also downloads.
    await stack.temporal.client.workflow
      .getHandle(workflowId, runId)
      .result()
      .catch(() => undefined);
    const { stdout } = await promisify(execFile)(
      await resolveTemporalCli(),
      [
        'workflow',
        'show',
        '--workflow-id',
        workflowId,
        ...(runId ? ['--run-id', runId] : []),
        '--address',
        stack.temporalAddress,
        '--output',
        'json',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return stdout;
  };
  const turn = async (
    expected: string,
    steps: Step[],
    body: object,
    act?: (t: { chatId: string; runId: string }) => Promise<void>,
  ) => {
    // A step a cancelled turn never took must not leak into the next one.
    model.steps.splice(0, model.steps.length, ...steps);
    const t = await send(body);
    if (act) await act(t);
    const end = await until(t, terminal);
    if (end.status !== expected) throw new Error(`expected ${expected}, the run ended ${end.status}`);
    return show(t.chatId);
  };
  // crop_image runs as a local activity, every other tool as an activity: both are recorded.
  const media = await startMediaServer();
  const pictureUrl = media.add('picture.png', await quadrantImage(40, 30), 'image/png');
  const crop = { image_url: pictureUrl, x: 0, y: 0, width: 20, height: 15 };
  const cropping = (id: string): ModelReply => ({
    text: 'Cropping it.',
    toolCalls: [{ id, toolName: 'crop_image', input: crop }],
  });
  const lastDirectCall = async () => {
    const { rows } = await stack.db.pool.query<{ id: string }>(
      `SELECT id FROM "ToolCall" WHERE "userId" = $1 AND "runId" IS NULL ORDER BY "startedAt" DESC LIMIT 1`,
      [user.userId],
    );
    return show(`tool:${rows[0]?.id ?? ''}`);
  };
  const image = (id: string): ModelReply => ({
    text: 'Drawing it.',
    toolCalls: [{ id, toolName: 'ai_image_2', input: { prompt: 'a lighthouse' } }],
  });
  const waiting = (t: { chatId: string; runId: string }) =>
    until(t, (s) => s.waitpoints.some((w) => w.status === 'PENDING')).then((s) => s.waitpoints[0]?.id ?? '');

  /** The id of the chat's current execution: the run's, before it continues as new into the next turn. */
  const execution = async (chatId: string) =>
    (await stack.temporal.client.workflow.getHandle(chatId).describe()).runId;
  /**
   * A turn sent to the chat while `head` is its run, with `onActiveRun`; once both have ended, the
   * history of the head's execution, which ended by continuing as new into the turn.
   */
  const behind = async (
    head: { chatId: string; runId: string },
    onActiveRun: 'enqueue' | 'interrupt',
    release?: () => Promise<void>,
  ) => {
    const headExecution = await execution(head.chatId);
    const t = await send({ text: 'and then this', chatId: head.chatId, onActiveRun });
    if (release) await release();
    await until(head, terminal);
    const end = await until(t, terminal);
    if (end.status !== 'COMPLETE') throw new Error(`expected COMPLETE, the queued turn ended ${end.status}`);
    return show(head.chatId, headExecution);
  };

  /** One agent.completed delivery to `url`, recorded once it has settled as `settled`. */
  const delivery = async (url: string, settled: 'DELIVERED' | 'FAILED') => {
    const session = { cookie: user.cookie, origin: gateway.url };
    const endpoint = (await call(
      'POST',
      '/api/webhook-endpoints',
      { url, events: ['agent.completed'] },
      session,
    )) as { id: string };
    model.steps.splice(0, model.steps.length, { text: 'Hello.', toolCalls: [] });
    const t = await send({ text: 'hello' });
    await until(t, terminal);
    const { rows } = await waitFor(
      async () => {
        const r = await stack.db.pool.query<{ envelopeId: string }>(
          `SELECT "envelopeId" FROM "WebhookDelivery" WHERE "endpointId" = $1 AND status = $2`,
          [endpoint.id, settled],
        );
        return r.rowCount ? r : undefined;
      },
      { what: 'the delivery', timeoutMs: 60_000 },
    );
    const history = await show(rows[0]?.envelopeId ?? '');
    await call('DELETE', `/api/webhook-endpoints/${endpoint.id}`, undefined, session);
    return history;
  };

  const scenarios: [string, () => Promise<string>][] = [
    ['text-turn', () => turn('COMPLETE', [{ text: 'Hello there.', toolCalls: [] }], { text: 'hello' })],
    [
      'tool-turn',
      () => turn('COMPLETE', [image('c1'), { text: 'Here it is.', toolCalls: [] }], { text: 'draw' }),
    ],
    [
      'crop-turn',
      () => turn('COMPLETE', [cropping('c1'), { text: 'Cropped.', toolCalls: [] }], { text: 'crop' }),
    ],
    [
      'plan-approved',
      () =>
        turn(
          'COMPLETE',
          [image('c1'), { text: 'Done.', toolCalls: [] }],
          { text: 'draw', planMode: true },
          async (t) => {
            const id = await waiting(t);
            await call('POST', `/api/v1/chats/${t.chatId}/runs/${t.runId}/waitpoints/${id}/complete`, {
              approved: true,
            });
          },
        ),
    ],
    [
      'plan-rejected',
      () =>
        turn('CANCELLED', [image('c1')], { text: 'draw', planMode: true }, async (t) => {
          const id = await waiting(t);
          await call('POST', `/api/v1/chats/${t.chatId}/runs/${t.runId}/waitpoints/${id}/complete`, {
            approved: false,
            feedback: 'no',
          });
        }),
    ],
    ['plan-expired', () => turn('CANCELLED', [image('c1')], { text: 'draw', planMode: true })],
    [
      'cancelled-mid-step',
      () =>
        turn(
          'CANCELLED',
          [{ hold: true, reply: { text: 'Thinking', toolCalls: [] } }],
          { text: 'think' },
          async (t) => {
            await until(t, (s) => s.status === 'RUNNING');
            await call('POST', `/api/v1/chats/${t.chatId}/runs/${t.runId}/cancel`);
          },
        ),
    ],
    [
      // Recorded as it ends, whatever the run row says: the old code could leave that row QUEUED.
      'cancelled-at-once',
      async () => {
        model.steps.splice(0, model.steps.length, { text: 'Too late.', toolCalls: [] });
        const t = await send({ text: 'hello' });
        await call('POST', `/api/v1/chats/${t.chatId}/runs/${t.runId}/cancel`);
        return show(t.chatId);
      },
    ],
    [
      // The cancel reaches Temporal before any worker has taken the workflow's first task.
      'cancelled-before-start',
      async () => {
        const late = stack.config({ ...settings, TEMPORAL_TASK_QUEUE: `record-late-${randomUUID()}` });
        const lateGateway = await startGateway({ config: late });
        const t = (await call(
          'POST',
          '/api/v1/completions',
          { text: 'hello' },
          user.bearer,
          lateGateway.url,
        )) as {
          chatId: string;
          runId: string;
        };
        await call(
          'POST',
          `/api/v1/chats/${t.chatId}/runs/${t.runId}/cancel`,
          undefined,
          user.bearer,
          lateGateway.url,
        );
        const lateWorker = await startWorker({ config: late, model });
        const history = await show(t.chatId);
        await lateWorker.stop();
        await lateGateway.close();
        return history;
      },
    ],
    [
      // The worker running the step is asked to stop: at its grace's end the step goes, as an
      // activity task, to another worker (the handoff).
      'stopped-mid-step',
      async () => {
        const own = stack.config({ ...settings, TEMPORAL_TASK_QUEUE: `record-stop-${randomUUID()}` });
        const ownGateway = await startGateway({ config: own });
        const held = new ScriptedModel([{ text: 'Never finished here.', toolCalls: [] }]);
        held.holdAfterFirstHalf();
        const stopping = await startWorker({ config: own, model: held, shutdownGraceMs: 200 });
        const t = (await call(
          'POST',
          '/api/v1/completions',
          { text: 'hello' },
          user.bearer,
          ownGateway.url,
        )) as {
          chatId: string;
        };
        await waitFor(async () => (held.calls.length > 0 ? true : undefined), { what: 'the held step' });
        const finishing = new ScriptedModel([{ text: 'Finished here.', toolCalls: [] }]);
        const taking = await startWorker({ config: own, model: finishing });
        await stopping.stop();
        const history = await show(t.chatId);
        await taking.stop();
        await ownGateway.close();
        return history;
      },
    ],
    ['failed', () => turn('FAILED', [{ fail: 'The model refused.' }], { text: 'hello' })],
    [
      // A turn queued behind a plan awaiting approval: the head's ending promotes it, and its
      // execution continues as new into it.
      'queued-turn',
      async () => {
        model.steps.splice(
          0,
          model.steps.length,
          image('c1'),
          { text: 'Done.', toolCalls: [] },
          { text: 'Next.', toolCalls: [] },
        );
        const head = await send({ text: 'draw', planMode: true });
        const id = await waiting(head);
        return behind(head, 'enqueue', async () => {
          await call('POST', `/api/v1/chats/${head.chatId}/runs/${head.runId}/waitpoints/${id}/complete`, {
            approved: true,
          });
        });
      },
    ],
    [
      // A turn that interrupts the chat's run mid-step: the run ends CANCELLED, and its execution
      // continues as new into the turn.
      'interrupted',
      async () => {
        model.steps.splice(
          0,
          model.steps.length,
          { hold: true, reply: { text: 'Thinking', toolCalls: [] } },
          { text: 'Doing this instead.', toolCalls: [] },
        );
        const head = await send({ text: 'think' });
        await until(head, (s) => s.status === 'RUNNING');
        return behind(head, 'interrupt');
      },
    ],
    // The run's own maxSteps ends it after its second step, whose tool still runs.
    [
      'max-steps',
      () => turn('COMPLETE', [image('c1'), image('c2'), image('c3')], { text: 'draw', maxSteps: 2 }),
    ],
    // A tool call past the budget's maxToolCalls ends the run FAILED (BUDGET_EXCEEDED).
    ['budget-exceeded', () => turn('FAILED', [image('c1')], { text: 'draw', budget: { maxToolCalls: 0 } })],
    [
      'tool-call',
      async () => {
        await call('POST', '/api/v1/tools/ai_image_2', { prompt: 'a lighthouse' });
        return lastDirectCall();
      },
    ],
    [
      'crop-call',
      async () => {
        await call('POST', '/api/v1/tools/crop_image', crop);
        return lastDirectCall();
      },
    ],
    ['delivered', () => delivery(`${receiverUrl}/ok`, 'DELIVERED')],
    ['delivery-retried', () => delivery(hookUrl, 'DELIVERED')],
    ['delivery-gave-up', () => delivery(`${receiverUrl}/down`, 'FAILED')],
  ];
  const only = process.env.RECORD_ONLY?.split(',');
  for (const [name, run] of scenarios.filter(([n]) => !only || only.includes(n))) {
    await writeFile(path.join(out, `${version}-${name}.json`), await run());
    process.stdout.write(`recorded ${version}-${name}\n`);
  }
  receiver.close();
  await media.close();
  await gateway.close();
  await worker.stop();
  await stopTestStack();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
