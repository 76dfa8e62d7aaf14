import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { createTestUser, type TestUser } from '../../testkit/users';

/** The console's mirror of the public routes: the session only, with its cross-site check. */
describe('console routes under /console/api/v1', () => {
  let gateway: TestGateway;
  let user: TestUser;
  before(async () => {
    gateway = await startGateway();
    user = await createTestUser();
  });
  after(() => gateway.close());

  const createChat = (headers: Record<string, string>) =>
    fetch(`${gateway.url}/console/api/v1/chats`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ title: 'from the console' }),
    });

  it('serves the signed-in user the same answers as the public route gives their key', async () => {
    const created = await createChat({ cookie: user.cookie, origin: gateway.url });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    const viaConsole = await fetch(`${gateway.url}/console/api/v1/chats/${id}`, {
      headers: { cookie: user.cookie },
    });
    const viaKey = await fetch(`${gateway.url}/api/v1/chats/${id}`, { headers: user.bearer });
    assert.equal(viaConsole.status, 200);
    assert.deepEqual(await viaConsole.json(), await viaKey.json());
  });

  it('refuses an API key, no credentials, and a cross-site write, writing nothing', async () => {
    const before = (
      (await (await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer })).json()) as {
        data: unknown[];
      }
    ).data.length;
    const withKey = await createChat(user.bearer);
    assert.equal(withKey.status, 401);
    assert.equal(((await withKey.json()) as { code: string }).code, 'UNAUTHORIZED');
    assert.equal((await createChat({})).status, 401);
    const crossSite = await createChat({ cookie: user.cookie, origin: 'https://evil.example' });
    assert.equal(crossSite.status, 403);
    assert.equal(((await crossSite.json()) as { code: string }).code, 'FORBIDDEN');
    const after = (
      (await (await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer })).json()) as {
        data: unknown[];
      }
    ).data.length;
    assert.equal(after, before);
  });

  it('tells the console who is signed in, and a visitor that nobody is, with 200 either way', async () => {
    const signedIn = await fetch(`${gateway.url}/console/api/session`, { headers: { cookie: user.cookie } });
    assert.equal(signedIn.status, 200);
    assert.equal(((await signedIn.json()) as { user: { id: string } }).user.id, user.userId);
    for (const cookie of [undefined, 'svc_session=not-a-session']) {
      const visitor = await fetch(`${gateway.url}/console/api/session`, {
        headers: cookie ? { cookie } : {},
      });
      assert.equal(visitor.status, 200);
      assert.deepEqual(await visitor.json(), { user: null });
      assert.equal(visitor.headers.get('cache-control'), 'no-store');
    }
    // The public route keeps DECISIONS' answer.
    assert.equal((await fetch(`${gateway.url}/api/auth/session`)).status, 401);
  });

  it('still refuses the session cookie on the public routes', async () => {
    const res = await fetch(`${gateway.url}/api/v1/chats`, { headers: { cookie: user.cookie } });
    assert.equal(res.status, 401);
  });
});
