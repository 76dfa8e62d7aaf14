import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ModelReply } from '../../core/model/types';
import { requestRunCancel } from '../../core/runs/store';
import { modelOf, ScriptedModel } from '../support/scripted-model';
import { LocalLanguageModel } from '../../core/model/local';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { createWebhookEndpoint } from '../support/webhooks';
import { startWorker, type TestWorker } from '../../testkit/worker';

interface Snapshot {
  status: string;
  text: string;
  error: string | null;
  assistantMessageId: string;
  triggerRunId: string | null;
  toolCalls: { id: string; toolName: string; status: string; error: string | null }[];
  waitpoints: {
    id: string;
    status: string;
    plan: { summary: string; steps: { toolName: string; input: unknown }[] };
  }[];
}

describe('agent runs', function () {
  this.timeout(90_000);
  let user: TestUser;
  let gateway: TestGateway;
  let worker: TestWorker;
  let model: LanguageModelV4 | null;

  /** A worker and gateway on their own task queue, with the model this test chooses. */
  async function serve(chosen: LanguageModelV4 | null, overrides: Record<string, string> = {}) {
    model = chosen;
    const config = (await testStack()).config({ TEMPORAL_TASK_QUEUE: `agent-${randomUUID()}`, ...overrides });
    worker = await startWorker({ config, model });
    gateway = await startGateway({ config });
  }

  beforeEach(async () => {
    user = await createTestUser();
  });
  afterEach(async () => {
    await gateway?.close();
    await worker?.stop();
  });

  const send = async (body: Record<string, unknown>) => {
    const res = await fetch(`${gateway.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as { chatId: string; runId: string; messageId: string };
  };
  const snapshot = async (turn: { chatId: string; runId: string }) => {
    const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
      headers: user.bearer,
    });
    assert.equal(res.status, 200);
    return (await res.json()) as Snapshot;
  };
  const until = (turn: { chatId: string; runId: string }, accept: (s: Snapshot) => boolean, what: string) =>
    waitFor(
      async () => {
        const s = await snapshot(turn);
        return accept(s) ? s : undefined;
      },
      { what, timeoutMs: 60_000 },
    );
  const terminal = (s: Snapshot) => ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status);
  const post = (path: string, body: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify(body),
    });

  it('completes a text turn, streaming partial text into the snapshot, and stores the assistant message', async () => {
    const scripted = new ScriptedModel([{ text: 'Hello, streaming world!', toolCalls: [] }]);
    scripted.holdAfterFirstHalf();
    await serve(scripted);
    const turn = await send({ text: 'Say hello' });

    const partial = await until(
      turn,
      (s) => s.status === 'RUNNING' && s.text === 'Hello, strea',
      'partial text',
    );
    assert.equal(partial.text, 'Hello, strea');
    scripted.release();
    const done = await until(turn, terminal, 'the run to finish');
    assert.equal(done.status, 'COMPLETE');
    assert.equal(done.text, 'Hello, streaming world!');
    assert.equal(done.error, null);

    const { db } = await testStack();
    const { rows } = await db.pool.query(
      `SELECT role, "contentBlocks", "runId" FROM "Message" WHERE id = $1`,
      [done.assistantMessageId],
    );
    assert.deepEqual(rows[0], {
      role: 'assistant',
      contentBlocks: [{ type: 'text', text: 'Hello, streaming world!' }],
      runId: turn.runId,
    });
    const chat = await db.pool.query(`SELECT "lastMessageId" FROM "Chat" WHERE id = $1`, [turn.chatId]);
    assert.equal(chat.rows[0]?.lastMessageId, done.assistantMessageId);
    // The model saw the user's message.
    assert.deepEqual(scripted.calls[0], [{ role: 'user', text: 'Say hello', media: [] }]);
  });

  it('writes a reply streamed whole within the write interval once, by the statement that ends the run', async () => {
    // Five pieces, each a turn of the event loop apart: a fast model, or the local one.
    const pieces = ['One ', 'reply, ', 'in five ', 'quick ', 'pieces.'];
    await serve(
      modelOf('quick', async (request) => {
        for (const piece of pieces) {
          request.onText(piece);
          await new Promise((resolve) => setImmediate(resolve));
        }
        return { text: pieces.join(''), toolCalls: [] };
      }),
    );
    const turn = await send({ text: 'hello' });
    const done = await until(turn, terminal, 'the run to finish');
    assert.equal(done.text, pieces.join(''));
    const { db } = await testStack();
    const { rows } = await db.pool.query<{ data: { text: string } }>(
      `SELECT data FROM "RunEvent" WHERE "runId" = $1 AND type = 'text.delta' ORDER BY seq`,
      [turn.runId],
    );
    assert.deepEqual(
      rows.map((r) => r.data.text),
      [pieces.join('')],
    );
  });

  it('lets the next turn into the chat once the run is terminal, with the history', async () => {
    await serve(new LocalLanguageModel());
    const first = await send({ text: 'first question' });
    await until(first, terminal, 'the first run');
    const second = await send({ text: 'second question', chatId: first.chatId });
    const done = await until(second, terminal, 'the second run');
    assert.equal(done.status, 'COMPLETE');
    assert.match(done.text, /second question/);
  });

  it('echoes a message cut at a character, never between the halves of one (the local model)', async () => {
    await serve(new LocalLanguageModel());
    // The 200th character is an emoji: a cut by UTF-16 units would keep only its first half.
    const done = await until(
      await send({ text: `${'a'.repeat(199)}\u{1f600} and more` }),
      terminal,
      'the run',
    );
    assert.equal(done.status, 'COMPLETE');
    assert.ok(done.text.includes(`${'a'.repeat(199)}\u{1f600}"`), done.text);
  });

  it('keeps the chat out of the workflow: each step loads the history itself, so no payload grows with it', async () => {
    const scripted = new ScriptedModel([
      { text: 'first answer', toolCalls: [] },
      { text: 'second answer', toolCalls: [] },
    ]);
    await serve(scripted);
    // Two long messages (the longest a turn takes): a workflow that carried the history would hold both.
    const long = (marker: string) => `${marker} ${'lorem ipsum '.repeat(600)}`;
    const first = await send({ text: long('FIRST-TURN-MARKER') });
    await until(first, terminal, 'the first run');
    const second = await send({ text: long('SECOND-TURN-MARKER'), chatId: first.chatId });
    const done = await until(second, terminal, 'the second run');
    assert.equal(done.status, 'COMPLETE');
    // The model did see the whole chat...
    assert.match(JSON.stringify(scripted.calls.at(-1)), /FIRST-TURN-MARKER[\s\S]*SECOND-TURN-MARKER/);
    // ... but no event of the run's workflow (input, activity inputs and results) carries it.
    const { temporal } = await testStack();
    const history = await temporal.client.workflow
      .getHandle(second.chatId, done.triggerRunId ?? undefined)
      .fetchHistory();
    // Every payload's bytes as text (JSON.stringify would show them base64-encoded).
    const payloads: string[] = [];
    const collect = (value: unknown): void => {
      if (value instanceof Uint8Array) payloads.push(Buffer.from(value).toString('utf8'));
      else if (value && typeof value === 'object') Object.values(value).forEach(collect);
    };
    collect(history.events);
    const text = payloads.join('\n');
    assert.ok(text.includes(second.runId), 'the payloads were read: the input names the run');
    for (const [what, mark] of [
      ['the first turn', 'FIRST-TURN-MARKER'],
      ['the second turn', 'SECOND-TURN-MARKER'],
      ['a message body', 'lorem ipsum'],
    ] as const) {
      assert.ok(
        !text.includes(mark),
        `${what}'s text is in a workflow payload (${payloads.length} payloads)`,
      );
    }
  });

  it('fails the run with a safe message when no model provider is configured', async () => {
    await serve(null);
    const turn = await send({ text: 'anyone there?' });
    const done = await until(turn, terminal, 'the run to fail');
    assert.equal(done.status, 'FAILED');
    assert.equal(done.error, 'No model provider is configured.');
  });

  it('cancels a running run: the model activity stops, the run ends CANCELLED, and a repeat gets 409', async () => {
    const scripted = new ScriptedModel([{ text: 'This will never finish', toolCalls: [] }]);
    scripted.holdAfterFirstHalf();
    await serve(scripted);
    const turn = await send({ text: 'long job' });
    await until(turn, (s) => s.status === 'RUNNING' && s.text.length > 0, 'the model to start');

    const res = await post(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}/cancel`, {});
    assert.equal(res.status, 202);
    const done = await until(turn, terminal, 'the run to be cancelled');
    assert.equal(done.status, 'CANCELLED');
    assert.equal(done.error, 'The run was cancelled.');

    const again = await post(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}/cancel`, {});
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { code: string }).code, 'RUN_NOT_ACTIVE');
  });

  it('stops the model call at the commit of a cancel the worker hears of from PostgreSQL alone', async () => {
    const scripted = new ScriptedModel([{ text: 'This will never finish', toolCalls: [] }]);
    scripted.holdAfterFirstHalf();
    await serve(scripted);
    const turn = await send({ text: 'long job' });
    await until(turn, (s) => s.status === 'RUNNING' && s.text.length > 0, 'the model to start');
    // The cancel as the route records it, with Temporal left untold: the model step is a local
    // activity, which Temporal's cancel reaches only at its workflow task's next beat, and this
    // one would never come. The run's notification is what stops it.
    const { db } = await testStack();
    const scope = { userId: user.userId, chatId: turn.chatId, runId: turn.runId };
    assert.ok(await requestRunCancel(db.pool, scope));
    const done = await until(turn, terminal, 'the run to be cancelled');
    assert.equal(done.status, 'CANCELLED');
    assert.equal(done.error, 'The run was cancelled.');
    assert.equal(scripted.aborted, 1);
  });

  it('cancels the active run when its chat is deleted', async () => {
    const scripted = new ScriptedModel([{ text: 'Working on it for a long while', toolCalls: [] }]);
    scripted.holdAfterFirstHalf();
    await serve(scripted);
    const turn = await send({ text: 'long job' });
    await until(turn, (s) => s.status === 'RUNNING' && s.text.length > 0, 'the model to start');
    const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}`, {
      method: 'DELETE',
      headers: user.bearer,
    });
    assert.equal(res.status, 204);
    const { db } = await testStack();
    const status = await waitFor(
      async () => {
        const { rows } = await db.pool.query<{ status: string }>(`SELECT status FROM "Run" WHERE id = $1`, [
          turn.runId,
        ]);
        return rows[0]?.status === 'CANCELLED' ? rows[0].status : undefined;
      },
      { what: 'the run to be cancelled', timeoutMs: 30_000 },
    );
    assert.equal(status, 'CANCELLED');
  });

  describe('plan mode', () => {
    const planReply: ModelReply = {
      text: 'I will generate a cat.',
      toolCalls: [{ id: 'call_1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
    };

    it('waits for approval with the plan, and a rejection cancels the run', async () => {
      const scripted = new ScriptedModel([structuredClone(planReply)]);
      await serve(scripted);
      const turn = await send({ text: 'draw a cat', planMode: true });
      const waiting = await until(turn, (s) => s.status === 'WAITING', 'the plan waitpoint');
      const [waitpoint] = waiting.waitpoints;
      assert.ok(waitpoint);
      assert.equal(waitpoint.status, 'PENDING');
      assert.equal(waitpoint.plan.summary, 'I will generate a cat.');
      assert.deepEqual(
        waitpoint.plan.steps.map((s) => [s.toolName, s.input]),
        [['ai_image_2', { prompt: 'a cat' }]],
      );
      assert.deepEqual(waiting.toolCalls, [], 'no tool runs before approval');

      const path = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waitpoint.id}/complete`;
      const res = await post(path, { approved: false, feedback: 'no cats' });
      assert.equal(res.status, 202);
      assert.equal(((await res.json()) as { status: string }).status, 'REJECTED');
      const done = await until(turn, terminal, 'the run to end');
      assert.equal(done.status, 'CANCELLED');
      assert.equal(done.waitpoints[0]?.status, 'REJECTED');

      const duplicate = await post(path, { approved: true });
      assert.equal(duplicate.status, 409);
      assert.equal(((await duplicate.json()) as { code: string }).code, 'WAITPOINT_RESOLVED');
    });

    it('runs the planned tools once approved, then completes', async () => {
      await serve(
        new ScriptedModel([structuredClone(planReply), { text: 'Here is your cat.', toolCalls: [] }]),
        {
          IMAGE_PROVIDER: 'local-preview',
        },
      );
      // A receiver that never answers: the ledger shows the tool call's event all the same.
      const endpoint = await createWebhookEndpoint(gateway.url, user, 'http://127.0.0.1:9/hooks', [
        'tool.completed',
      ]);
      const turn = await send({ text: 'draw a cat', planMode: true });
      const waiting = await until(turn, (s) => s.status === 'WAITING', 'the plan waitpoint');
      const path = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waiting.waitpoints[0]?.id}/complete`;
      const res = await post(path, { approved: true, feedback: 'go ahead' });
      assert.equal(res.status, 202, await res.clone().text());
      const done = await until(turn, terminal, 'the run to finish');
      assert.equal(done.status, 'COMPLETE', done.error ?? '');
      assert.deepEqual(
        done.toolCalls.map((c) => [c.toolName, c.status]),
        [['ai_image_2', 'SUCCEEDED']],
      );
      assert.equal(done.waitpoints[0]?.status, 'APPROVED');
      assert.equal(done.text, 'I will generate a cat.\n\nHere is your cat.');
      const { webhooks } = done as unknown as {
        webhooks: { event: string; endpointId: string; toolCallId: string | null }[];
      };
      assert.deepEqual(
        webhooks.map((d) => [d.event, d.endpointId, d.toolCallId]),
        [['tool.completed', endpoint.id, done.toolCalls[0]?.id]],
      );
    });

    it('answers a duplicate decision with WAITPOINT_RESOLVED and changes nothing', async () => {
      const scripted = new ScriptedModel([structuredClone(planReply)]);
      await serve(scripted);
      const turn = await send({ text: 'draw a cat', planMode: true });
      const waiting = await until(turn, (s) => s.status === 'WAITING', 'the plan waitpoint');
      const path = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waiting.waitpoints[0]?.id}/complete`;
      const [a, b] = await Promise.all([post(path, { approved: false }), post(path, { approved: true })]);
      const statuses = [a.status, b.status].sort();
      assert.deepEqual(statuses, [202, 409]);
      const loser = a.status === 409 ? a : b;
      assert.equal(((await loser.json()) as { code: string }).code, 'WAITPOINT_RESOLVED');
    });

    it('expires the plan after PLAN_APPROVAL_TIMEOUT and cancels the run', async () => {
      await serve(new ScriptedModel([structuredClone(planReply)]), { PLAN_APPROVAL_TIMEOUT: '1500ms' });
      const turn = await send({ text: 'draw a cat', planMode: true });
      const done = await until(turn, terminal, 'the plan to expire');
      assert.equal(done.status, 'CANCELLED');
      assert.equal(done.waitpoints[0]?.status, 'EXPIRED');
    });

    it('does not wait for approval when the turn needs no tool', async () => {
      await serve(new ScriptedModel([{ text: 'Just text.', toolCalls: [] }]));
      const turn = await send({ text: 'hello', planMode: true });
      const done = await until(turn, terminal, 'the run to finish');
      assert.equal(done.status, 'COMPLETE');
      assert.deepEqual(done.waitpoints, []);
    });

    it('refuses a decision for a plan the approver did not see, and records who decided', async () => {
      await serve(new ScriptedModel([structuredClone(planReply)]));
      const turn = await send({ text: 'draw a cat', planMode: true });
      const waiting = await until(turn, (s) => s.status === 'WAITING', 'the plan waitpoint');
      const waitpoint = waiting.waitpoints[0] as Snapshot['waitpoints'][number] & {
        planHash: string;
        decidedBy: unknown;
        decidedAt: string | null;
        createdAt: string;
      };
      // The hash a client can compute itself: SHA-256 of the plan with its keys sorted.
      const sorted = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(sorted)
          : v && typeof v === 'object'
            ? Object.fromEntries(
                Object.keys(v)
                  .sort()
                  .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
              )
            : v;
      const expected = createHash('sha256')
        .update(JSON.stringify(sorted(waitpoint.plan)))
        .digest('hex');
      assert.equal(waitpoint.planHash, expected);
      assert.equal(waitpoint.decidedBy, null);
      assert.equal(waitpoint.decidedAt, null);

      const path = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waitpoint.id}/complete`;
      const malformed = await post(path, { approved: true, planHash: 'abc' });
      assert.equal(malformed.status, 400);
      const stale = await post(path, { approved: true, planHash: 'f'.repeat(64) });
      assert.equal(stale.status, 409);
      assert.equal(((await stale.json()) as { code: string }).code, 'PLAN_CHANGED');
      assert.equal((await snapshot(turn)).waitpoints[0]?.status, 'PENDING');

      const seen = await post(path, { approved: false, planHash: waitpoint.planHash });
      assert.equal(seen.status, 202, await seen.clone().text());
      const decided = (await seen.json()) as { decidedBy: unknown; decidedAt: string; planHash: string };
      const decidedBy = { userId: user.userId, apiKeyId: user.apiKeyId, sessionId: null, via: 'rest' };
      assert.deepEqual(decided.decidedBy, decidedBy);
      assert.equal(decided.planHash, waitpoint.planHash);
      const done = await until(turn, terminal, 'the run to end');
      const shown = done.waitpoints[0] as unknown as {
        decidedBy: unknown;
        decidedAt: string;
        resolvedAt: string;
      };
      assert.deepEqual(shown.decidedBy, decidedBy);
      assert.equal(shown.decidedAt, decided.decidedAt);
      assert.ok(Date.parse(shown.decidedAt) > Date.parse(waitpoint.createdAt));
    });

    it('rejects bad decisions with 4xx: a non-boolean, an unknown waitpoint, another user', async () => {
      await serve(new ScriptedModel([structuredClone(planReply)]));
      const turn = await send({ text: 'draw a cat', planMode: true });
      const waiting = await until(turn, (s) => s.status === 'WAITING', 'the plan waitpoint');
      const base = `/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints`;
      const bad = await post(`${base}/${waiting.waitpoints[0]?.id}/complete`, { approved: 'yes' });
      assert.equal(bad.status, 400);
      const unknown = await post(`${base}/${randomUUID()}/complete`, { approved: true });
      assert.equal(unknown.status, 404);
      assert.equal(((await unknown.json()) as { code: string }).code, 'WAITPOINT_NOT_FOUND');
      const other = await createTestUser();
      const probe = await fetch(`${gateway.url}${base}/${waiting.waitpoints[0]?.id}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...other.bearer },
        body: JSON.stringify({ approved: true }),
      });
      assert.equal(probe.status, 404);
      assert.equal(((await probe.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
      assert.equal((await snapshot(turn)).waitpoints[0]?.status, 'PENDING');
    });
  });

  it('answers 404 for another user’s run and for an unknown run', async () => {
    await serve(new LocalLanguageModel());
    const turn = await send({ text: 'mine' });
    const other = await createTestUser();
    const probe = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
      headers: other.bearer,
    });
    assert.equal(probe.status, 404);
    assert.equal(((await probe.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
    const unknown = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${randomUUID()}`, {
      headers: user.bearer,
    });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: string }).code, 'RUN_NOT_FOUND');
    const cancel = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/cancel`, {
      method: 'POST',
      headers: other.bearer,
    });
    assert.equal(cancel.status, 404);
  });
});
