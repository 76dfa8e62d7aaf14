import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

interface Message {
  id: string;
  chatId: string;
  role: string;
  runId: string | null;
  contentBlocks: unknown[];
  attachments: { id: string; filename: string; mimeType: string; status: string; url: string }[];
  createdAt: string;
}
interface MessagePage {
  data: Message[];
  nextCursor: string | null;
}

async function insertChat(userId: string): Promise<string> {
  const { db } = await testStack();
  const id = randomUUID();
  await db.pool.query(
    `INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'Chat', now())`,
    [id, userId],
  );
  return id;
}

/** Messages one second apart from a fixed instant, so their order is the order given. */
async function insertMessages(chatId: string, texts: string[], startSecond = 0): Promise<string[]> {
  const { db } = await testStack();
  const ids: string[] = [];
  for (const [i, text] of texts.entries()) {
    const id = randomUUID();
    await db.pool.query(
      `INSERT INTO "Message" (id, "chatId", role, "contentBlocks", "createdAt")
       VALUES ($1, $2, $3, $4, '2026-01-01T00:00:00Z'::timestamptz + $5 * interval '1 second')`,
      [id, chatId, i % 2 ? 'assistant' : 'user', JSON.stringify([{ type: 'text', text }]), startSecond + i],
    );
    ids.push(id);
  }
  return ids;
}

describe('messages', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  const list = (user: TestUser, chatId: string, query = '') =>
    fetch(`${gateway.url}/api/v1/chats/${chatId}/messages${query ? `?${query}` : ''}`, {
      headers: user.bearer,
    });

  it('lists a chat’s messages oldest first with content blocks and attachments', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const [first, second] = await insertMessages(chatId, ['hello', 'hi there']);
    const { db } = await testStack();
    const attachmentId = randomUUID();
    const storageKey = `uploads/${user.userId}/${attachmentId}/cat.png`;
    await db.pool.query(
      `INSERT INTO "Attachment" (id, "userId", "chatId", "messageId", "storageKey", filename, "mimeType", "sizeBytes")
       VALUES ($1, $2, $3, $4, $5, 'cat.png', 'image/png', 10)`,
      [attachmentId, user.userId, chatId, first, storageKey],
    );
    const res = await list(user, chatId);
    assert.equal(res.status, 200);
    const body = (await res.json()) as MessagePage;
    assert.equal(body.nextCursor, null);
    assert.deepEqual(
      body.data.map((m) => m.id),
      [first, second],
    );
    const [m1, m2] = body.data as [Message, Message];
    assert.deepEqual(Object.keys(m1).sort(), [
      'attachments',
      'chatId',
      'contentBlocks',
      'createdAt',
      'id',
      'regeneratedFrom',
      'replyTo',
      'role',
      'runId',
    ]);
    assert.equal(m1.chatId, chatId);
    assert.equal(m1.role, 'user');
    assert.equal(m1.runId, null);
    assert.deepEqual(m1.contentBlocks, [{ type: 'text', text: 'hello' }]);
    assert.equal(m1.createdAt, '2026-01-01T00:00:00.000Z');
    assert.deepEqual(m1.attachments, [
      {
        id: attachmentId,
        filename: 'cat.png',
        mimeType: 'image/png',
        status: 'ready',
        url: gateway.deps.storage.url(storageKey),
      },
    ]);
    assert.equal(m2.role, 'assistant');
    assert.deepEqual(m2.attachments, []);
  });

  it('pages with limit and cursor, defaulting to 50', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const ids = await insertMessages(
      chatId,
      Array.from({ length: 53 }, (_, i) => `m${i}`),
    );
    const first = (await (await list(user, chatId)).json()) as MessagePage;
    assert.equal(first.data.length, 50);
    assert.ok(first.nextCursor);
    // A message arriving between pages lands at the end, never repeating or hiding one.
    const [late] = await insertMessages(chatId, ['late'], 100);
    const second = (await (await list(user, chatId, `cursor=${first.nextCursor}`)).json()) as MessagePage;
    assert.equal(second.nextCursor, null);
    assert.deepEqual(
      [...first.data, ...second.data].map((m) => m.id),
      [...ids, late],
    );
    const small = (await (await list(user, chatId, 'limit=2')).json()) as MessagePage;
    assert.deepEqual(
      small.data.map((m) => m.id),
      ids.slice(0, 2),
    );
  });

  it('pages newest first with order=desc, ties broken by id, and the cursor going on backwards', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const ids = await insertMessages(chatId, ['first', 'second', 'third']);
    const { db } = await testStack();
    const twins = [randomUUID(), randomUUID()].sort();
    for (const id of twins)
      await db.pool.query(
        `INSERT INTO "Message" (id, "chatId", role, "createdAt") VALUES ($1, $2, 'user', '2026-01-01T00:01:00Z')`,
        [id, chatId],
      );
    const newest = [...ids, ...twins].reverse();
    const first = (await (await list(user, chatId, 'order=desc&limit=3')).json()) as MessagePage;
    assert.deepEqual(
      first.data.map((m) => m.id),
      newest.slice(0, 3),
    );
    assert.ok(first.nextCursor);
    // A message arriving between pages is newer than the cursor: the older pages neither repeat nor skip one.
    await insertMessages(chatId, ['late'], 100);
    const rest = (await (
      await list(user, chatId, `order=desc&limit=10&cursor=${first.nextCursor}`)
    ).json()) as MessagePage;
    assert.equal(rest.nextCursor, null);
    assert.deepEqual(
      rest.data.map((m) => m.id),
      newest.slice(3),
    );
    const bad = await list(user, chatId, 'order=newest');
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { code: string }).code, 'INVALID_REQUEST');
  });

  it('breaks ties on createdAt by id', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const { db } = await testStack();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids)
      await db.pool.query(
        `INSERT INTO "Message" (id, "chatId", role, "createdAt") VALUES ($1, $2, 'user', '2026-01-01T00:00:00Z')`,
        [id, chatId],
      );
    const a = (await (await list(user, chatId, 'limit=2')).json()) as MessagePage;
    const b = (await (await list(user, chatId, `limit=2&cursor=${a.nextCursor}`)).json()) as MessagePage;
    assert.deepEqual(
      [...a.data, ...b.data].map((m) => m.id),
      [...ids].sort(),
    );
  });

  it('answers 404 CHAT_NOT_FOUND for another user’s chat, a deleted chat and an unknown one', async () => {
    const user = await createTestUser();
    const other = await createTestUser();
    const theirs = await insertChat(other.userId);
    await insertMessages(theirs, ['secret']);
    const deleted = await insertChat(user.userId);
    const { db } = await testStack();
    await db.pool.query(`UPDATE "Chat" SET "deletedAt" = now() WHERE id = $1`, [deleted]);
    for (const chatId of [theirs, deleted, randomUUID()]) {
      const res = await list(user, chatId);
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), { error: 'No such chat.', code: 'CHAT_NOT_FOUND' });
    }
  });

  it('answers 400 INVALID_REQUEST for a bad chat id, limit or cursor', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const bad = await list(user, 'nope');
    assert.equal(bad.status, 400);
    for (const query of ['limit=0', 'limit=101', 'cursor=%%%', 'cursor=e30']) {
      const res = await list(user, chatId, query);
      assert.equal(res.status, 400, query);
      assert.equal(((await res.json()) as { code: string }).code, 'INVALID_REQUEST');
    }
  });

  it('answers 401 without an API key', async () => {
    const user = await createTestUser();
    const chatId = await insertChat(user.userId);
    const res = await fetch(`${gateway.url}/api/v1/chats/${chatId}/messages`, {
      headers: { cookie: user.cookie },
    });
    assert.equal(res.status, 401);
  });
});
