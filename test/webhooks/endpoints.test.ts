import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { openSecret } from '../../core/webhooks/secret-box';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  isActive: boolean;
  createdAt: string;
  secret?: string;
}

interface ErrorBody {
  code: string;
  error: string;
  details?: { path: string; message: string }[];
}

describe('webhook endpoint management', () => {
  /** The test default: plain http and loopback allowed, as in local development. */
  let relaxed: TestGateway;
  /** Production settings: https only, no private addresses. */
  let strict: TestGateway;
  let alice: TestUser;
  let bob: TestUser;

  before(async () => {
    const stack = await testStack();
    relaxed = await startGateway();
    strict = await startGateway({
      config: stack.config({ ALLOW_INSECURE_WEBHOOKS: 'false', ALLOW_PRIVATE_NETWORK_URLS: 'false' }),
    });
    [alice, bob] = await Promise.all([createTestUser(), createTestUser()]);
  });
  after(async () => {
    await relaxed?.close();
    await strict?.close();
  });

  function call(
    gateway: TestGateway,
    user: TestUser | undefined,
    method: string,
    path: string,
    body?: unknown,
  ) {
    return fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        ...(user ? { cookie: user.cookie } : {}),
        ...(method === 'GET' ? {} : { origin: gateway.url }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function create(user: TestUser, body: unknown, gateway = relaxed) {
    const res = await call(gateway, user, 'POST', '/api/webhook-endpoints', body);
    return { status: res.status, body: (await res.json()) as Endpoint & ErrorBody };
  }

  async function list(user: TestUser, query = '') {
    const res = await call(relaxed, user, 'GET', `/api/webhook-endpoints${query}`);
    assert.equal(res.status, 200);
    return (await res.json()) as { data: Endpoint[]; nextCursor: string | null };
  }

  it('creates an endpoint, answering its secret once, with events deduplicated', async () => {
    const { status, body } = await create(alice, {
      url: 'https://hooks.example.test/a',
      events: ['agent.completed', 'tool.completed', 'agent.completed'],
    });
    assert.equal(status, 201);
    assert.deepEqual(Object.keys(body).sort(), ['createdAt', 'events', 'id', 'isActive', 'secret', 'url']);
    assert.match(body.secret!, /^svcwhsec_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(body.events, ['agent.completed', 'tool.completed']);
    assert.equal(body.isActive, true);
    assert.ok(!Number.isNaN(Date.parse(body.createdAt)));
  });

  it('stores the secret sealed: no plaintext in the database, recoverable only with APP_SECRET', async () => {
    const { body } = await create(alice, {
      url: 'https://hooks.example.test/sealed',
      events: ['agent.failed'],
    });
    const { db } = await testStack();
    const { rows } = await db.pool.query<Record<string, unknown>>(
      'SELECT * FROM "WebhookEndpoint" WHERE id = $1',
      [body.id],
    );
    const row = rows[0]!;
    assert.ok(!JSON.stringify(row).includes(body.secret!), 'no column holds the secret');
    assert.ok(!JSON.stringify(row).includes(body.secret!.slice('svcwhsec_'.length)));
    assert.equal(openSecret([relaxed.deps.config.APP_SECRET], String(row.secretEncrypted)), body.secret);
    assert.throws(() => openSecret(['another-app-secret-of-at-least-32-chars'], String(row.secretEncrypted)));
  });

  it('lists the caller’s endpoints, newest first, paged, never with a secret', async () => {
    const user = await createTestUser();
    const made: Endpoint[] = [];
    for (const n of [1, 2, 3]) {
      made.push(
        (await create(user, { url: `https://hooks.example.test/${n}`, events: ['agent.started'] })).body,
      );
    }
    const all = await list(user);
    assert.deepEqual(
      all.data.map((e) => e.id),
      made.map((e) => e.id).reverse(),
    );
    assert.equal(all.nextCursor, null);
    for (const e of all.data) {
      assert.deepEqual(Object.keys(e).sort(), ['createdAt', 'events', 'id', 'isActive', 'url']);
    }
    const first = await list(user, '?limit=2');
    assert.equal(first.data.length, 2);
    assert.ok(first.nextCursor);
    const second = await list(user, `?limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(
      [...first.data, ...second.data].map((e) => e.id),
      all.data.map((e) => e.id),
    );
    assert.equal(second.nextCursor, null);

    const bad = await call(relaxed, user, 'GET', '/api/webhook-endpoints?cursor=nonsense');
    assert.equal(bad.status, 400);
  });

  it('refuses bad events with INVALID_REQUEST and details', async () => {
    for (const events of [[], ['agent.unknown'], 'agent.started', undefined]) {
      const { status, body } = await create(alice, { url: 'https://hooks.example.test/x', events });
      assert.equal(status, 400, JSON.stringify(events));
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.ok(body.details?.some((d) => d.path.startsWith('body.events')));
    }
    const { status, body } = await create(alice, { url: 'not a url', events: ['agent.started'] });
    assert.equal(status, 400);
    assert.ok(body.details?.some((d) => d.path === 'body.url'));
  });

  it('accepts only https when ALLOW_INSECURE_WEBHOOKS is false', async () => {
    const refused = await create(
      alice,
      { url: 'http://93.184.215.14/hook', events: ['agent.started'] },
      strict,
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'INVALID_REQUEST');
    assert.deepEqual(refused.body.details, [{ path: 'body.url', message: 'must be an https URL' }]);
    const ok = await create(alice, { url: 'https://93.184.215.14/hook', events: ['agent.started'] }, strict);
    assert.equal(ok.status, 201);
    // The development setting lets plain http through.
    assert.equal(
      (await create(alice, { url: 'http://hooks.example.test/', events: ['agent.started'] })).status,
      201,
    );
  });

  it('refuses private, loopback, link-local and metadata hosts when ALLOW_PRIVATE_NETWORK_URLS is false', async () => {
    for (const url of [
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://localhost/hook',
    ]) {
      const { status, body } = await create(alice, { url, events: ['agent.started'] }, strict);
      assert.equal(status, 400, url);
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.equal(body.details?.[0]?.path, 'body.url');
    }
    const withCredentials = await create(
      alice,
      { url: 'https://user:pw@93.184.215.14/hook', events: ['agent.started'] },
      strict,
    );
    assert.equal(withCredentials.status, 400);
  });

  it('deletes an endpoint once; another user’s, a repeat or an unknown one is 404', async () => {
    const { body } = await create(alice, {
      url: 'https://hooks.example.test/gone',
      events: ['agent.started'],
    });
    const other = await call(relaxed, bob, 'DELETE', `/api/webhook-endpoints/${body.id}`);
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as ErrorBody).code, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    assert.ok(!(await list(bob)).data.some((e) => e.id === body.id), 'not in another user’s list');

    const res = await call(relaxed, alice, 'DELETE', `/api/webhook-endpoints/${body.id}`);
    assert.equal(res.status, 204);
    assert.ok(!(await list(alice)).data.some((e) => e.id === body.id));
    const { db } = await testStack();
    const { rows } = await db.pool.query(
      'SELECT "isActive", "deletedAt" FROM "WebhookEndpoint" WHERE id = $1',
      [body.id],
    );
    assert.equal(rows[0].isActive, false);
    assert.ok(rows[0].deletedAt);

    for (const id of [body.id, randomUUID()]) {
      const again = await call(relaxed, alice, 'DELETE', `/api/webhook-endpoints/${id}`);
      assert.equal(again.status, 404);
      assert.equal(((await again.json()) as ErrorBody).code, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    }
  });

  it('hides another user’s deliveries and refuses to redeliver them', async () => {
    const { body } = await create(alice, { url: 'https://hooks.example.test/d', events: ['agent.started'] });
    const { db } = await testStack();
    const deliveryId = randomUUID();
    await db.pool.query(
      `INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, status, "updatedAt")
       VALUES ($1, $2, 'agent.started', 'run-1', $3, '{}', 'FAILED', now())`,
      [deliveryId, body.id, `wh:${body.id}:agent.started:run-1`],
    );
    const others = await call(relaxed, bob, 'GET', `/api/webhook-endpoints/${body.id}/deliveries`);
    assert.equal(others.status, 404);
    assert.equal(((await others.json()) as ErrorBody).code, 'WEBHOOK_ENDPOINT_NOT_FOUND');
    const redeliver = await call(relaxed, bob, 'POST', `/api/webhook-deliveries/${deliveryId}/redeliver`);
    assert.equal(redeliver.status, 404);
    assert.equal(((await redeliver.json()) as ErrorBody).code, 'DELIVERY_NOT_FOUND');

    const mine = await call(relaxed, alice, 'GET', `/api/webhook-endpoints/${body.id}/deliveries`);
    assert.equal(mine.status, 200);
    const page = (await mine.json()) as { data: { id: string; status: string; attempts: unknown[] }[] };
    assert.deepEqual(
      page.data.map((d) => [d.id, d.status, d.attempts.length]),
      [[deliveryId, 'FAILED', 0]],
    );
  });

  it('answers a delivery with its latest 20 attempts and the count of all of them', async () => {
    const { body } = await create(alice, {
      url: 'https://hooks.example.test/many',
      events: ['agent.started'],
    });
    const { db } = await testStack();
    const deliveryId = randomUUID();
    await db.pool.query(
      `INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, status, "updatedAt")
       VALUES ($1, $2, 'agent.started', 'run-many', $3, '{}', 'FAILED', now())`,
      [deliveryId, body.id, `wh:${body.id}:agent.started:run-many`],
    );
    // Eight series of four failed attempts: 32 in all.
    await db.pool.query(
      `INSERT INTO "WebhookAttempt" (id, "deliveryId", series, attempt, "startedAt", "durationMs", "statusCode")
       SELECT gen_random_uuid(), $1, s, a, now(), 5, 500 FROM generate_series(1, 8) s, generate_series(1, 4) a`,
      [deliveryId],
    );
    const res = await call(relaxed, alice, 'GET', `/api/webhook-endpoints/${body.id}/deliveries`);
    const [delivery] = (
      (await res.json()) as {
        data: { attemptCount: number; attempts: { series: number; attempt: number }[] }[];
      }
    ).data;
    assert.ok(delivery);
    assert.equal(delivery.attemptCount, 32);
    assert.equal(delivery.attempts.length, 20);
    assert.deepEqual([delivery.attempts[0]?.series, delivery.attempts[0]?.attempt], [4, 1]);
    assert.deepEqual([delivery.attempts.at(-1)?.series, delivery.attempts.at(-1)?.attempt], [8, 4]);
  });

  it('answers 429 RATE_LIMITED past WEBHOOK_REDELIVERIES_PER_HOUR redeliveries', async () => {
    const stack = await testStack();
    const limited = await startGateway({ config: stack.config({ WEBHOOK_REDELIVERIES_PER_HOUR: '2' }) });
    try {
      const user = await createTestUser();
      for (let i = 0; i < 2; i++) {
        const res = await call(limited, user, 'POST', `/api/webhook-deliveries/${randomUUID()}/redeliver`);
        assert.equal(res.status, 404);
      }
      const res = await call(limited, user, 'POST', `/api/webhook-deliveries/${randomUUID()}/redeliver`);
      assert.equal(res.status, 429);
      assert.equal(((await res.json()) as ErrorBody).code, 'RATE_LIMITED');
      assert.ok(Number(res.headers.get('retry-after')) > 0);
      // Another user's redeliveries are counted apart.
      const other = await call(limited, bob, 'POST', `/api/webhook-deliveries/${randomUUID()}/redeliver`);
      assert.equal(other.status, 404);
    } finally {
      await limited.close();
    }
  });

  it('needs the session: no cookie is 401, a cross-site write is 403', async () => {
    assert.equal((await call(relaxed, undefined, 'GET', '/api/webhook-endpoints')).status, 401);
    const res = await fetch(`${relaxed.url}/api/webhook-endpoints`, {
      method: 'POST',
      headers: { cookie: alice.cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://hooks.example.test/', events: ['agent.started'] }),
    });
    assert.equal(res.status, 403);
  });
});
