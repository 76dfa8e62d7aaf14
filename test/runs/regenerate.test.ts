import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { ScriptedModel } from '../support/scripted-model';
import { startService, type TestService } from '../support/service';
import { waitFor } from '../support/wait';

interface Turn {
  chatId: string;
  runId: string;
  messageId: string;
  status: string;
}
interface Message {
  id: string;
  role: string;
  runId: string | null;
  replyTo: string | null;
  regeneratedFrom: string | null;
  contentBlocks: { type: string; text?: string }[];
}

/**
 * Regenerate: a new run answering the chat's latest user message again; the earlier answer stays,
 * listed, and the newest answer is the one the agent reads on.
 */
describe('regenerating an answer', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let user: TestUser;
  const model = new ScriptedModel([]);
  let service: TestService;
  before(async () => {
    service = await startService('regenerate', model);
    ({ gateway, user } = service);
  });
  after(() => service.stop());

  const post = (path: string, body: unknown, headers: Record<string, string> = {}, who = user) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...who.bearer, ...headers },
      body: JSON.stringify(body),
    });
  const get = async <T>(path: string, who = user): Promise<T> => {
    const res = await fetch(`${gateway.url}${path}`, { headers: who.bearer });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as T;
  };
  async function send(text: string, reply: string, chatId?: string): Promise<Turn> {
    model.replies.push({ text: reply, toolCalls: [] });
    const res = await post('/api/v1/completions', { text, ...(chatId ? { chatId } : {}) });
    assert.equal(res.status, 202, await res.clone().text());
    const turn = (await res.json()) as Turn;
    await completed(turn);
    return turn;
  }
  async function regenerate(
    chatId: string,
    messageId: string,
    reply: string,
    body: unknown = {},
  ): Promise<Turn> {
    model.replies.push({ text: reply, toolCalls: [] });
    const res = await post(`/api/v1/chats/${chatId}/messages/${messageId}/regenerate`, body);
    assert.equal(res.status, 202, await res.clone().text());
    const turn = (await res.json()) as Turn;
    await completed(turn);
    return turn;
  }
  async function completed(turn: Turn): Promise<void> {
    await waitFor(
      async () => {
        const run = await get<{ status: string }>(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`);
        return run.status === 'COMPLETE' ? true : undefined;
      },
      { what: `run ${turn.runId} COMPLETE` },
    );
  }
  const messages = async (chatId: string) =>
    (await get<{ data: Message[] }>(`/api/v1/chats/${chatId}/messages?limit=50`)).data;
  const texts = (list: Message[]) => list.map((m) => m.contentBlocks.map((b) => b.text ?? '').join(''));
  async function runCount(): Promise<number> {
    const { db } = await testStack();
    const { rows } = await db.pool.query(`SELECT count(*) FROM "Run" WHERE "userId" = $1`, [user.userId]);
    return Number(rows[0].count);
  }

  it('answers the latest user message again: both answers listed, the newest read on', async () => {
    const first = await send('What is a lighthouse?', 'Answer A.');
    const again = await regenerate(first.chatId, first.messageId, 'Answer B.', {
      metadata: { attempt: '2' },
    });
    assert.equal(again.chatId, first.chatId);
    assert.equal(again.messageId, first.messageId, 'the new run answers the same user message');
    assert.notEqual(again.runId, first.runId);
    assert.equal(again.status, 'queued');
    // The regenerated run's model saw the history up to the question, not the answer it replaces.
    const seen = JSON.stringify(model.calls.at(-1));
    assert.match(seen, /What is a lighthouse\?/);
    assert.doesNotMatch(seen, /Answer A/);

    let list = await messages(first.chatId);
    assert.deepEqual(texts(list), ['What is a lighthouse?', 'Answer A.', 'Answer B.']);
    const [question, answerA, answerB] = list as [Message, Message, Message];
    assert.deepEqual(
      [question.replyTo, answerA.replyTo, answerB.replyTo],
      [null, first.messageId, first.messageId],
    );
    assert.deepEqual([answerA.regeneratedFrom, answerB.regeneratedFrom], [null, answerA.id]);
    assert.equal(answerB.runId, again.runId);

    const runs = await get<{ data: { id: string; messageId: string; metadata: object }[] }>(
      `/api/v1/chats/${first.chatId}/runs`,
    );
    assert.deepEqual(
      runs.data.map((r) => [r.id, r.messageId, r.metadata]),
      [
        [again.runId, first.messageId, { attempt: '2' }],
        [first.runId, first.messageId, {}],
      ],
    );

    // Naming an answer regenerates the message it answers.
    const third = await regenerate(first.chatId, answerB.id, 'Answer C.');
    assert.equal(third.messageId, first.messageId);
    list = await messages(first.chatId);
    assert.equal(list.at(-1)?.regeneratedFrom, answerB.id);

    // The next turn reads on from the newest answer only.
    await send('And a harbour?', 'Answer D.', first.chatId);
    const next = JSON.stringify(model.calls.at(-1));
    assert.match(next, /Answer C/);
    assert.doesNotMatch(next, /Answer A|Answer B/);
  });

  it('refuses what it cannot regenerate with a clear error, writing nothing', async () => {
    const first = await send('One?', 'One.');
    const second = await send('Two?', 'Two.', first.chatId);
    const stranger = await createTestUser();
    const path = (messageId: string, chatId = first.chatId) =>
      `/api/v1/chats/${chatId}/messages/${messageId}/regenerate`;
    const before = await runCount();
    const refusals: [string, unknown, number, string, TestUser?][] = [
      [path(first.messageId), {}, 409, 'NOT_LATEST_TURN'],
      [path(randomUUID()), {}, 404, 'MESSAGE_NOT_FOUND'],
      [path(first.messageId, randomUUID()), {}, 404, 'CHAT_NOT_FOUND'],
      [path(second.messageId), {}, 404, 'CHAT_NOT_FOUND', stranger],
      [path(second.messageId), { planMode: 'yes' }, 400, 'INVALID_REQUEST'],
      [path(second.messageId), { text: 'other' }, 400, 'INVALID_REQUEST'],
      [path(second.messageId), { metadata: { 'a=b': 'c' } }, 400, 'INVALID_REQUEST'],
      [path('not-a-uuid'), {}, 400, 'INVALID_REQUEST'],
    ];
    for (const [url, body, status, code, who] of refusals) {
      const res = await post(url, body, {}, who);
      assert.equal(res.status, status, `${url} ${JSON.stringify(body)}: ${await res.clone().text()}`);
      const error = (await res.json()) as { code: string; details?: { path: string }[] };
      assert.equal(error.code, code);
      if (status === 400)
        assert.match(JSON.stringify(error.details), /body\.(planMode|metadata)|body|params\.messageId/);
    }
    // A message of another of the user's chats is not this chat's.
    const other = await send('Elsewhere?', 'Elsewhere.');
    const res = await post(path(other.messageId), {});
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { code: string }).code, 'MESSAGE_NOT_FOUND');
    assert.equal(await runCount(), before + 1, 'only the send wrote a run');
    assert.deepEqual(texts(await messages(first.chatId)), ['One?', 'One.', 'Two?', 'Two.']);
  });

  it("runs with the chat's settings as a send does, its own winning; a model not offered is 400", async () => {
    const first = await send('Settings?', 'As the operator set.');
    const patched = await fetch(`${gateway.url}/api/v1/chats/${first.chatId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...user.bearer },
      body: JSON.stringify({ instructions: 'Be terse.', maxSteps: 3 }),
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    const again = await regenerate(first.chatId, first.messageId, 'Terse.', {
      maxSteps: 2,
      budget: { maxToolCalls: 1 },
    });
    const run = await get<{ settings: { instructions: string; maxSteps: number; budget: unknown } }>(
      `/api/v1/chats/${first.chatId}/runs/${again.runId}`,
    );
    assert.equal(run.settings.instructions, 'Be terse.');
    assert.equal(run.settings.maxSteps, 2);
    assert.deepEqual(run.settings.budget, { maxCredits: null, maxToolCalls: 1 });

    const before = await runCount();
    const res = await post(`/api/v1/chats/${first.chatId}/messages/${first.messageId}/regenerate`, {
      model: 'gpt-9',
    });
    assert.equal(res.status, 400, await res.clone().text());
    const error = (await res.json()) as { details: { path: string }[] };
    assert.deepEqual(
      error.details.map((d) => d.path),
      ['body.model'],
    );
    assert.equal(await runCount(), before, 'nothing written');
  });

  it('answers 409 RUN_ACTIVE naming the run while the chat is busy', async () => {
    const first = await send('Busy?', 'Not yet.');
    model.replies.push({ text: 'Held for a while.', toolCalls: [] });
    model.holdAfterFirstHalf();
    const res = await post(`/api/v1/chats/${first.chatId}/messages/${first.messageId}/regenerate`, {});
    assert.equal(res.status, 202);
    const held = (await res.json()) as Turn;
    try {
      const busy = await post(`/api/v1/chats/${first.chatId}/messages/${first.messageId}/regenerate`, {});
      assert.equal(busy.status, 409);
      const body = (await busy.json()) as { code: string; activeRun: { id: string } };
      assert.equal(body.code, 'RUN_ACTIVE');
      assert.equal(body.activeRun.id, held.runId);
    } finally {
      model.release();
    }
    await completed(held);
  });

  it('admits a keyed regenerate once: a retry with the Idempotency-Key gets the same run', async () => {
    const first = await send('Keyed?', 'First keyed.');
    model.replies.push({ text: 'Second keyed.', toolCalls: [] });
    const key = { 'idempotency-key': randomUUID() };
    const url = `/api/v1/chats/${first.chatId}/messages/${first.messageId}/regenerate`;
    const a = await post(url, {}, key);
    assert.equal(a.status, 202);
    const b = await post(url, {}, key);
    assert.equal(b.status, 202);
    assert.equal(b.headers.get('idempotent-replayed'), 'true');
    const [turnA, turnB] = [(await a.json()) as Turn, (await b.json()) as Turn];
    assert.equal(turnB.runId, turnA.runId);
    await completed(turnA);
    const reused = await post(url, { planMode: true }, key);
    assert.equal(reused.status, 422);
    assert.deepEqual(texts(await messages(first.chatId)), ['Keyed?', 'First keyed.', 'Second keyed.']);
  });
});
