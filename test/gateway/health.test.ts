import assert from 'node:assert/strict';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';

describe('health', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  it('answers /healthz while alive', async () => {
    const res = await fetch(`${gateway.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
    assert.match(res.headers.get('x-request-id') ?? '', /^[\w.-]+$/);
  });

  it('answers /readyz 200 when PostgreSQL and Temporal are reachable', async () => {
    const res = await fetch(`${gateway.url}/readyz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ready', database: 'up', temporal: 'up' });
  });

  it('checks PostgreSQL for /readyz at most once a second, however many ask', async () => {
    const { db } = await testStack();
    let checkouts = 0;
    const count = () => checkouts++;
    db.pool.on('acquire', count);
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${gateway.url}/readyz`)));
      assert.ok(answers.every((r) => r.status === 200));
      const again = await Promise.all(Array.from({ length: 40 }, () => fetch(`${gateway.url}/readyz`)));
      assert.ok(again.every((r) => r.status === 200));
    } finally {
      db.pool.off('acquire', count);
    }
    // One check (two if the second burst came after the first answer's second), never one each.
    assert.ok(checkouts <= 4, `${checkouts} connections checked out for 80 readiness requests`);
  });

  it('answers /readyz 503 naming Temporal when it is unreachable', async () => {
    const down = await startGateway({ temporalAddress: `127.0.0.1:${await freePort()}` });
    try {
      const res = await fetch(`${down.url}/readyz`);
      assert.equal(res.status, 503);
      assert.deepEqual(await res.json(), { status: 'unavailable', database: 'up', temporal: 'down' });
    } finally {
      await down.close();
    }
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await fetch(`${gateway.url}/nope`);
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'No such route.', code: 'NOT_FOUND' });
  });
});
