/**
 * Per-user caps: what one user can create and hold, so one user cannot hurt another. Each cap is
 * set low here through its configuration name, as an operator would.
 */
import assert from 'node:assert/strict';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

interface ErrorBody {
  code: string;
  error: string;
  details?: { path: string; message: string }[];
}

async function count(sql: string, values: unknown[]): Promise<number> {
  const { db } = await testStack();
  const { rows } = await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, values);
  return Number(rows[0]?.n);
}

describe('per-user caps on keys and webhook endpoints', () => {
  let gateway: TestGateway;

  before(async () => {
    const stack = await testStack();
    gateway = await startGateway({
      config: stack.config({ MAX_API_KEYS_PER_USER: '3', MAX_WEBHOOK_ENDPOINTS_PER_USER: '2' }),
    });
  });
  after(() => gateway?.close());

  const call = (user: TestUser, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        cookie: user.cookie,
        origin: gateway.url,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('refuses an API key past MAX_API_KEYS_PER_USER with 422 LIMIT_REACHED; a revoked key frees its place', async () => {
    const user = await createTestUser(); // holds one key already
    for (const name of ['second', 'third']) {
      assert.equal((await call(user, 'POST', '/api/keys', { name })).status, 201);
    }
    const refused = await call(user, 'POST', '/api/keys', { name: 'fourth' });
    assert.equal(refused.status, 422);
    const body = (await refused.json()) as ErrorBody;
    assert.equal(body.code, 'LIMIT_REACHED');
    assert.deepEqual(
      body.details?.map((d) => d.path),
      ['MAX_API_KEYS_PER_USER'],
    );
    assert.equal(await count('"ApiKey" WHERE "userId" = $1', [user.userId]), 3, 'nothing written');

    // Another user is not counted against this one.
    const other = await createTestUser();
    assert.equal((await call(other, 'POST', '/api/keys', { name: 'theirs' })).status, 201);

    assert.equal((await call(user, 'DELETE', `/api/keys/${user.apiKeyId}`)).status, 204);
    assert.equal((await call(user, 'POST', '/api/keys', { name: 'fourth' })).status, 201);
  });

  it('lets racing creations take only the places left', async () => {
    const user = await createTestUser();
    const statuses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(user, 'POST', '/api/keys', { name: `k${i}` })),
    ).then((all) => all.map((r) => r.status).sort());
    assert.deepEqual(statuses, [201, 201, 422, 422, 422, 422]);
    assert.equal(await count('"ApiKey" WHERE "userId" = $1 AND "revokedAt" IS NULL', [user.userId]), 3);
  });

  it('refuses a webhook endpoint past MAX_WEBHOOK_ENDPOINTS_PER_USER with 422 LIMIT_REACHED; a deleted one frees its place', async () => {
    const user = await createTestUser();
    const endpoint = (i: number) => ({ url: `https://hooks.example.test/${i}`, events: ['agent.completed'] });
    const ids: string[] = [];
    for (const i of [1, 2]) {
      const res = await call(user, 'POST', '/api/webhook-endpoints', endpoint(i));
      assert.equal(res.status, 201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const refused = await call(user, 'POST', '/api/webhook-endpoints', endpoint(3));
    assert.equal(refused.status, 422);
    const body = (await refused.json()) as ErrorBody;
    assert.equal(body.code, 'LIMIT_REACHED');
    assert.deepEqual(
      body.details?.map((d) => d.path),
      ['MAX_WEBHOOK_ENDPOINTS_PER_USER'],
    );
    assert.equal(await count('"WebhookEndpoint" WHERE "userId" = $1', [user.userId]), 2, 'nothing written');

    assert.equal((await call(user, 'DELETE', `/api/webhook-endpoints/${ids[0]}`)).status, 204);
    assert.equal((await call(user, 'POST', '/api/webhook-endpoints', endpoint(3))).status, 201);
  });
});
