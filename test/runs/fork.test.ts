import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
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
}
interface Attachment {
  id: string;
  filename: string;
  url: string;
}
interface Message {
  id: string;
  chatId: string;
  role: string;
  runId: string | null;
  replyTo: string | null;
  contentBlocks: { type: string; text?: string; attachmentId?: string | null }[];
  attachments: Attachment[];
}
interface Chat {
  id: string;
  title: string;
  lastMessageId: string | null;
  settings: Record<string, unknown>;
}

/** Fork: a new chat holding a chat's history up to a message; its stored files shared, not copied. */
describe('forking a chat', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let user: TestUser;
  const model = new ScriptedModel([]);
  let service: TestService;
  before(async () => {
    service = await startService('fork', model, {
      STORAGE_LOCAL_DIR: await mkdtemp(path.join(tmpdir(), 'svc-fork-')),
    });
    ({ gateway, user } = service);
  });
  after(() => service.stop());

  const request = (method: string, url: string, body?: unknown, who = user) =>
    fetch(`${gateway.url}${url}`, {
      method,
      headers: { 'content-type': 'application/json', ...who.bearer },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const get = async <T>(url: string): Promise<T> => {
    const res = await request('GET', url);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as T;
  };
  async function completed(turn: Turn): Promise<Turn> {
    await waitFor(
      async () => {
        const run = await get<{ status: string }>(`/api/v1/chats/${turn.chatId}/runs/${turn.runId}`);
        return run.status === 'COMPLETE' ? true : undefined;
      },
      { what: `run ${turn.runId} COMPLETE` },
    );
    return turn;
  }
  async function send(body: Record<string, unknown>, reply: string): Promise<Turn> {
    model.replies.push({ text: reply, toolCalls: [] });
    const res = await request('POST', '/api/v1/completions', body);
    assert.equal(res.status, 202, await res.clone().text());
    return completed((await res.json()) as Turn);
  }
  async function fork(chatId: string, body: unknown): Promise<Chat> {
    const res = await request('POST', `/api/v1/chats/${chatId}/fork`, body);
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as Chat;
  }
  const messages = async (chatId: string) =>
    (await get<{ data: Message[] }>(`/api/v1/chats/${chatId}/messages?limit=50`)).data;
  const texts = (list: Message[]) => list.map((m) => m.contentBlocks.map((b) => b.text ?? '').join(''));
  async function storage(): Promise<{ files: number; bytes: number; attachments: number; chats: number }> {
    const { db } = await testStack();
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM "StoredFile" WHERE "userId" = $1)::int AS files,
              (SELECT "storedBytes" FROM "User" WHERE id = $1)::int AS bytes,
              (SELECT count(*) FROM "Attachment" WHERE "userId" = $1)::int AS attachments,
              (SELECT count(*) FROM "Chat" WHERE "userId" = $1)::int AS chats`,
      [user.userId],
    );
    return rows[0];
  }
  async function download(url: string): Promise<Buffer> {
    // The URL names PUBLIC_BASE_URL; this test's gateway listens on another port.
    const u = new URL(url);
    const res = await fetch(`${gateway.url}${u.pathname}${u.search}`);
    assert.equal(res.status, 200, url);
    return Buffer.from(await res.arrayBuffer());
  }

  it('copies the history up to the message into a new chat, sharing its stored files', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#2a6' } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png]), 'lighthouse.png');
    const uploaded = await fetch(`${gateway.url}/api/v1/uploads`, {
      method: 'POST',
      headers: user.bearer,
      body: form,
    });
    assert.equal(uploaded.status, 201);
    const attachmentId = ((await uploaded.json()) as { attachments: { id: string }[] }).attachments[0]?.id;
    const first = await send({ text: 'Look at this.', attachmentIds: [attachmentId] }, 'A lighthouse.');
    await send({ text: 'Second question?', chatId: first.chatId }, 'Second answer.');
    const source = await messages(first.chatId);
    const before = await storage();

    const answer = source[1] as Message;
    const forked = await fork(first.chatId, { messageId: answer.id, title: 'Take two' });
    assert.notEqual(forked.id, first.chatId);
    assert.equal(forked.title, 'Take two');

    const copies = await messages(forked.id);
    assert.deepEqual(texts(copies), ['Look at this.', 'A lighthouse.']);
    const [question, reply] = copies as [Message, Message];
    assert.equal(forked.lastMessageId, reply.id);
    for (const [copy, original] of [
      [question, source[0]],
      [reply, source[1]],
    ] as [Message, Message][]) {
      assert.notEqual(copy.id, original.id);
      assert.equal(copy.chatId, forked.id);
      assert.equal(copy.role, original.role);
      assert.equal(copy.runId, null, 'a copy has no run: runs stay with their chat');
    }
    assert.equal(reply.replyTo, question.id);
    // The attachment is a row of the fork's own, naming the same stored file.
    const [copied] = question.attachments;
    assert.ok(copied);
    assert.notEqual(copied.id, source[0]?.attachments[0]?.id);
    assert.equal(copied.filename, 'lighthouse.png');
    assert.equal(question.contentBlocks.find((b) => b.type === 'image')?.attachmentId, copied.id);
    assert.deepEqual(await download(copied.url), png);
    const after = await storage();
    assert.deepEqual(
      { files: after.files, bytes: after.bytes, attachments: after.attachments, chats: after.chats },
      {
        files: before.files,
        bytes: before.bytes,
        attachments: before.attachments + 1,
        chats: before.chats + 1,
      },
      'no stored file copied or counted twice',
    );
    assert.equal((await messages(first.chatId)).length, 4, 'the source is unchanged');

    // The fork goes on from its own history, and its runs are its own.
    const next = await send({ text: 'Go on here.', chatId: forked.id }, 'Going on.');
    const seen = JSON.stringify(model.calls.at(-1));
    assert.match(seen, /A lighthouse\./);
    assert.doesNotMatch(seen, /Second/);
    const runs = await get<{ data: { id: string }[] }>(`/api/v1/chats/${forked.id}/runs`);
    assert.deepEqual(
      runs.data.map((r) => r.id),
      [next.runId],
    );

    // Deleting the source leaves the fork's files readable: they were never the source's alone.
    assert.equal((await request('DELETE', `/api/v1/chats/${first.chatId}`)).status, 204);
    const [stillThere] = (await messages(forked.id))[0]?.attachments ?? [];
    assert.deepEqual(await download(stillThere?.url as string), png);

    // Without a title the fork takes its source's; forked at a user message it ends with it.
    const other = await send({ text: 'Titled by its text?' }, 'Yes.');
    const untitled = await fork(other.chatId, { messageId: other.messageId });
    const sourceChat = await get<Chat>(`/api/v1/chats/${other.chatId}`);
    assert.equal(untitled.title, sourceChat.title);
    assert.deepEqual(texts(await messages(untitled.id)), ['Titled by its text?']);
  });

  it('keeps the answer forked at, and leaves out answers a later one replaced', async () => {
    const first = await send({ text: 'Which one?' }, 'Answer one.');
    model.replies.push({ text: 'Answer two.', toolCalls: [] });
    const res = await request(
      'POST',
      `/api/v1/chats/${first.chatId}/messages/${first.messageId}/regenerate`,
      {},
    );
    assert.equal(res.status, 202);
    await completed((await res.json()) as Turn);
    const [, one, two] = (await messages(first.chatId)) as [Message, Message, Message];
    assert.deepEqual(texts(await messages((await fork(first.chatId, { messageId: two.id })).id)), [
      'Which one?',
      'Answer two.',
    ]);
    assert.deepEqual(texts(await messages((await fork(first.chatId, { messageId: one.id })).id)), [
      'Which one?',
      'Answer one.',
    ]);
  });

  it("gives the fork its chat's settings: its turns run as the source's would", async () => {
    const turn = await send({ text: 'Settings to keep?' }, 'Kept.');
    const patched = await request('PATCH', `/api/v1/chats/${turn.chatId}`, {
      instructions: 'Be terse.',
      maxSteps: 3,
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    const forked = await fork(turn.chatId, { messageId: turn.messageId });
    assert.deepEqual(forked.settings, { instructions: 'Be terse.', maxSteps: 3 });
    const next = await send({ text: 'Go on.', chatId: forked.id }, 'Going on.');
    const run = await get<{ settings: { instructions: string; maxSteps: number } }>(
      `/api/v1/chats/${forked.id}/runs/${next.runId}`,
    );
    assert.equal(run.settings.instructions, 'Be terse.');
    assert.equal(run.settings.maxSteps, 3);
  });

  it('refuses a bad fork with a clear error, writing nothing', async () => {
    const first = await send({ text: 'Mine.' }, 'Yours.');
    const elsewhere = await send({ text: 'Another chat.' }, 'Indeed.');
    const stranger = await createTestUser();
    const before = await storage();
    const cases: [string, unknown, number, string, TestUser?][] = [
      [first.chatId, { messageId: first.messageId }, 404, 'CHAT_NOT_FOUND', stranger],
      [randomUUID(), { messageId: first.messageId }, 404, 'CHAT_NOT_FOUND'],
      [first.chatId, { messageId: elsewhere.messageId }, 404, 'MESSAGE_NOT_FOUND'],
      [first.chatId, { messageId: randomUUID() }, 404, 'MESSAGE_NOT_FOUND'],
      [first.chatId, {}, 400, 'body.messageId'],
      [first.chatId, { messageId: 'not-a-uuid' }, 400, 'body.messageId'],
      [first.chatId, { messageId: first.messageId, title: '   ' }, 400, 'body.title'],
      [first.chatId, { messageId: first.messageId, extra: 1 }, 400, 'body'],
      ['not-a-uuid', { messageId: first.messageId }, 400, 'params.chatId'],
    ];
    for (const [chatId, body, status, expected, who] of cases) {
      const res = await request('POST', `/api/v1/chats/${chatId}/fork`, body, who);
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${await res.clone().text()}`);
      const error = (await res.json()) as { code: string; details?: { path: string }[] };
      if (status === 400) {
        assert.equal(error.code, 'INVALID_REQUEST');
        assert.ok(
          error.details?.some((d) => d.path.startsWith(expected)),
          `${JSON.stringify(body)}: ${JSON.stringify(error.details)}`,
        );
      } else assert.equal(error.code, expected);
    }
    assert.deepEqual(await storage(), before);
  });
});
