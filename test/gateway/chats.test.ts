import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

interface Chat {
  id: string;
  title: string;
  isFavorite: boolean;
  lastMessageAt: string | null;
  lastMessageId: string | null;
  settings: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}
interface ChatPage {
  data: Chat[];
  nextCursor: string | null;
}

describe('chats', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  const call = (user: TestUser, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/api/v1/chats${path}`, {
      method,
      headers: { ...user.bearer, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function create(user: TestUser, body: unknown = {}): Promise<Chat> {
    const res = await call(user, 'POST', '', body);
    assert.equal(res.status, 201);
    return (await res.json()) as Chat;
  }

  async function list(user: TestUser, query: string): Promise<ChatPage> {
    const res = await call(user, 'GET', `?${query}`);
    assert.equal(res.status, 200);
    return (await res.json()) as ChatPage;
  }

  async function chatRow(id: string) {
    const { db } = await testStack();
    return db.prisma.chat.findUniqueOrThrow({ where: { id } });
  }

  /** Creation order as activity order, one second apart: chats made in the same millisecond tie. */
  async function spreadActivity(ids: string[]): Promise<void> {
    const { db } = await testStack();
    await db.pool.query(
      `UPDATE "Chat" c SET "activityAt" = '2026-01-01T00:00:00Z'::timestamptz + (t.n * interval '1 second')
       FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, n) WHERE c.id = t.id`,
      [ids],
    );
  }

  async function chatCount(userId: string): Promise<number> {
    const { db } = await testStack();
    return db.prisma.chat.count({ where: { userId } });
  }

  describe('POST /api/v1/chats', () => {
    it('creates a chat with the default title and answers the Chat shape', async () => {
      const user = await createTestUser();
      const chat = await create(user);
      assert.deepEqual(Object.keys(chat).sort(), [
        'createdAt',
        'id',
        'isFavorite',
        'lastMessageAt',
        'lastMessageId',
        'settings',
        'title',
        'updatedAt',
      ]);
      assert.equal(chat.title, 'New chat');
      assert.equal(chat.isFavorite, false);
      assert.equal(chat.lastMessageAt, null);
      assert.equal(chat.lastMessageId, null);
      assert.deepEqual(chat.settings, {});
      assert.ok(!Number.isNaN(Date.parse(chat.createdAt)));
      assert.equal((await chatRow(chat.id)).userId, user.userId);
    });

    it('keeps a given title', async () => {
      const user = await createTestUser();
      assert.equal((await create(user, { title: 'Trip to Lisbon' })).title, 'Trip to Lisbon');
      assert.equal((await create(user, { title: 'x'.repeat(120) })).title.length, 120);
      // Trimmed once checked: the document's bounds hold for the title as sent.
      assert.equal((await create(user, { title: '  Lisbon \t' })).title, 'Lisbon');
      // White space is what the document's pattern names, read alike by every regex engine: a BOM
      // (white space to JavaScript, not to Python) is kept, as the pattern counts it a character.
      assert.equal((await create(user, { title: '\ufeffLisbon' })).title, '\ufeffLisbon');
    });

    it('answers 400 INVALID_REQUEST for an empty, blank, too long or unknown field, writing nothing', async () => {
      const user = await createTestUser();
      for (const body of [
        { title: '' },
        { title: '\r' },
        { title: '   ' },
        { title: `${'x'.repeat(120)} ` },
        { title: 'x'.repeat(121) },
        { title: 5 },
        { name: 'x' },
      ]) {
        const res = await call(user, 'POST', '', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        const error = (await res.json()) as { code: string; details: unknown[] };
        assert.equal(error.code, 'INVALID_REQUEST');
        assert.ok(error.details.length > 0);
      }
      assert.equal(await chatCount(user.userId), 0);
    });

    it('answers 401 without a valid key', async () => {
      const res = await fetch(`${gateway.url}/api/v1/chats`, { method: 'POST' });
      assert.equal(res.status, 401);
      const bad = await fetch(`${gateway.url}/api/v1/chats`, {
        method: 'POST',
        headers: { authorization: 'Bearer svck_live_nope' },
      });
      assert.equal(bad.status, 401);
    });
  });

  describe('GET /api/v1/chats/:chatId', () => {
    it('answers the caller’s chat', async () => {
      const user = await createTestUser();
      const chat = await create(user, { title: 'Mine' });
      const res = await call(user, 'GET', `/${chat.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), chat);
    });

    it('answers 404 CHAT_NOT_FOUND for an unknown chat and for another user’s', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      const theirs = await create(other);
      for (const id of [randomUUID(), theirs.id]) {
        const res = await call(user, 'GET', `/${id}`);
        assert.equal(res.status, 404);
        assert.deepEqual(await res.json(), { error: 'No such chat.', code: 'CHAT_NOT_FOUND' });
      }
    });

    it('answers 400 INVALID_REQUEST with details for a chat id that is not a UUID', async () => {
      const user = await createTestUser();
      const res = await call(user, 'GET', '/not-a-uuid');
      assert.equal(res.status, 400);
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.equal(body.details[0]?.path, 'params.chatId');
    });
  });

  describe('PATCH /api/v1/chats/:chatId', () => {
    it('renames and marks favorite', async () => {
      const user = await createTestUser();
      const chat = await create(user);
      const res = await call(user, 'PATCH', `/${chat.id}`, { title: 'Renamed', isFavorite: true });
      assert.equal(res.status, 200);
      const updated = (await res.json()) as Chat;
      assert.equal(updated.title, 'Renamed');
      assert.equal(updated.isFavorite, true);
      assert.ok(updated.updatedAt >= chat.updatedAt);
      const only = (await (await call(user, 'PATCH', `/${chat.id}`, { isFavorite: false })).json()) as Chat;
      assert.equal(only.title, 'Renamed');
      assert.equal(only.isFavorite, false);
    });

    it('answers 400 for an empty or invalid body, changing nothing', async () => {
      const user = await createTestUser();
      const chat = await create(user, { title: 'Kept' });
      for (const body of [{}, { title: '' }, { isFavorite: 'yes' }, { deletedAt: null }]) {
        const res = await call(user, 'PATCH', `/${chat.id}`, body);
        assert.equal(res.status, 400, JSON.stringify(body));
      }
      const row = await chatRow(chat.id);
      assert.equal(row.title, 'Kept');
      assert.equal(row.updatedAt.toISOString(), chat.updatedAt);
    });

    it('answers 404 for another user’s chat and a deleted one, changing nothing', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      const theirs = await create(other, { title: 'Theirs' });
      const res = await call(user, 'PATCH', `/${theirs.id}`, { title: 'Hijacked' });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
      assert.equal((await chatRow(theirs.id)).title, 'Theirs');
      const mine = await create(user);
      assert.equal((await call(user, 'DELETE', `/${mine.id}`)).status, 204);
      assert.equal((await call(user, 'PATCH', `/${mine.id}`, { title: 'Back' })).status, 404);
    });
  });

  describe('DELETE /api/v1/chats/:chatId', () => {
    it('soft-deletes: 204, then 404 on every route and on a repeat', async () => {
      const user = await createTestUser();
      const chat = await create(user);
      const res = await call(user, 'DELETE', `/${chat.id}`);
      assert.equal(res.status, 204);
      assert.ok((await chatRow(chat.id)).deletedAt);
      assert.equal((await call(user, 'GET', `/${chat.id}`)).status, 404);
      assert.equal((await call(user, 'GET', `/${chat.id}/messages`)).status, 404);
      const again = await call(user, 'DELETE', `/${chat.id}`);
      assert.equal(again.status, 404);
      assert.equal(((await again.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
      assert.ok(!(await list(user, 'limit=50')).data.some((c) => c.id === chat.id));
    });

    it('answers 404 for another user’s chat, which stays', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      const theirs = await create(other);
      const res = await call(user, 'DELETE', `/${theirs.id}`);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { code: string }).code, 'CHAT_NOT_FOUND');
      assert.equal((await chatRow(theirs.id)).deletedAt, null);
      assert.equal((await call(other, 'GET', `/${theirs.id}`)).status, 200);
    });
  });

  describe('GET /api/v1/chats', () => {
    it('lists only the caller’s chats, newest activity first, 20 by default', async () => {
      const user = await createTestUser();
      const other = await createTestUser();
      await create(other);
      const made: Chat[] = [];
      for (let i = 0; i < 22; i++) made.push(await create(user, { title: `chat ${i}` }));
      await spreadActivity(made.map((c) => c.id));
      const { db } = await testStack();
      // A message in the oldest chat moves it to the front.
      const oldest = made[0] as Chat;
      await db.pool.query(
        `UPDATE "Chat" SET "lastMessageAt" = now() + interval '1 minute', "activityAt" = now() + interval '1 minute' WHERE id = $1`,
        [oldest.id],
      );
      const first = await list(user, '');
      assert.equal(first.data.length, 20);
      assert.ok(first.nextCursor);
      assert.equal(first.data[0]?.id, oldest.id);
      assert.ok(first.data[0]?.lastMessageAt);
      assert.equal(first.data[1]?.id, made[21]?.id);
      const second = await list(user, `cursor=${first.nextCursor}`);
      assert.equal(second.data.length, 2);
      assert.equal(second.nextCursor, null);
      assert.deepEqual([...first.data, ...second.data].map((c) => c.id).sort(), made.map((c) => c.id).sort());
    });

    it('pages without skipping or repeating while chats are created between pages', async () => {
      const user = await createTestUser();
      const before: string[] = [];
      for (let i = 0; i < 7; i++) before.push((await create(user)).id);
      await spreadActivity(before);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const pageOf: ChatPage = await list(user, `limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...pageOf.data.map((c) => c.id));
        cursor = pageOf.nextCursor;
        await create(user);
      } while (cursor);
      assert.deepEqual(seen, [...before].reverse());
    });

    it('orders chats with the same activity time by id, without skipping across pages', async () => {
      const user = await createTestUser();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await create(user)).id);
      const { db } = await testStack();
      await db.pool.query(`UPDATE "Chat" SET "activityAt" = '2026-01-01T00:00:00Z' WHERE "userId" = $1`, [
        user.userId,
      ]);
      const a = await list(user, 'limit=2');
      const b = await list(user, `limit=2&cursor=${a.nextCursor}`);
      const c = await list(user, `limit=2&cursor=${b.nextCursor}`);
      assert.equal(c.nextCursor, null);
      assert.deepEqual(
        [...a.data, ...b.data, ...c.data].map((x) => x.id),
        [...ids].sort().reverse(),
      );
    });

    it('searches titles case-insensitively, treating % and _ literally', async () => {
      const user = await createTestUser();
      const trip = await create(user, { title: 'Trip to Lisbon' });
      const percent = await create(user, { title: '100% done' });
      await create(user, { title: '100 percent' });
      await create(user, { title: 'Other' });
      assert.deepEqual(
        (await list(user, 'q=LISBON')).data.map((c) => c.id),
        [trip.id],
      );
      assert.deepEqual(
        (await list(user, `q=${encodeURIComponent('0%')}`)).data.map((c) => c.id),
        [percent.id],
      );
      assert.deepEqual((await list(user, 'q=_')).data, []);
    });

    it('filters by favorite', async () => {
      const user = await createTestUser();
      const fav = await create(user);
      const plain = await create(user);
      await call(user, 'PATCH', `/${fav.id}`, { isFavorite: true });
      assert.deepEqual(
        (await list(user, 'favorite=true')).data.map((c) => c.id),
        [fav.id],
      );
      assert.deepEqual(
        (await list(user, 'favorite=false')).data.map((c) => c.id),
        [plain.id],
      );
    });

    it('answers 400 INVALID_REQUEST for a bad limit, favorite or cursor', async () => {
      const user = await createTestUser();
      const forged = Buffer.from(JSON.stringify({ a: 'yesterday', i: 'x' })).toString('base64url');
      for (const query of [
        'limit=0',
        'limit=51',
        'limit=abc',
        'favorite=yes',
        'cursor=garbage',
        `cursor=${forged}`,
      ]) {
        const res = await call(user, 'GET', `?${query}`);
        assert.equal(res.status, 400, query);
        const body = (await res.json()) as { code: string; details: { path: string }[] };
        assert.equal(body.code, 'INVALID_REQUEST');
        assert.match(body.details[0]?.path ?? '', /^query\./);
      }
    });
  });
});
