import assert from 'node:assert/strict';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

/** A path of every kind the gateway answers: probes, the API (with and without a key), pages, MCP, files, errors. */
const PATHS = [
  '/healthz',
  '/api/v1/chats',
  '/api/v1/chats?key',
  '/',
  '/docs',
  '/mcp',
  '/files/nothing?exp=1&sig=x',
  '/no-such-page',
];

/** Issue 45, finding 11: Strict-Transport-Security on every answer when the public origin is https. */
describe('transport security', function () {
  this.timeout(60_000);
  let overHttps: TestGateway;
  let overHttp: TestGateway;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    overHttps = await startGateway({
      config: stack.config({ PUBLIC_BASE_URL: 'https://chat.example.test' }),
    });
    overHttp = await startGateway({ config: stack.config({ PUBLIC_BASE_URL: 'http://localhost:3000' }) });
    user = await createTestUser();
  });
  after(async () => {
    await overHttps?.close();
    await overHttp?.close();
  });

  const answers = (gateway: TestGateway) =>
    Promise.all(
      PATHS.map(async (p) => {
        const [route, query] = p.split('?key');
        const res = await fetch(`${gateway.url}${route}${query ?? ''}`, {
          headers: p.endsWith('?key') ? user.bearer : {},
        });
        await res.arrayBuffer();
        return { path: p, status: res.status, hsts: res.headers.get('strict-transport-security') };
      }),
    );

  it('tells browsers to come back over https only, on every answer, when the public origin is https', async () => {
    const seen = await answers(overHttps);
    assert.ok(seen.some((a) => a.status === 200) && seen.some((a) => a.status >= 400), JSON.stringify(seen));
    assert.deepEqual(
      seen.filter((a) => a.hsts !== 'max-age=31536000'),
      [],
    );
  });

  it('says nothing of it over plain http', async () => {
    const seen = await answers(overHttp);
    assert.deepEqual(
      seen.filter((a) => a.hsts !== null),
      [],
    );
  });
});
