import assert from 'node:assert/strict';
import {
  createDatabase,
  databaseReachable,
  isDatabaseUnavailable,
  withTransaction,
} from '../../core/db/client';
import { testStack } from '../../testkit/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/** A URL like `url` that reaches PostgreSQL through the proxy at `address`. */
function through(url: string, address: string): string {
  const u = new URL(url);
  u.host = address;
  return u.toString();
}

describe('database client: PostgreSQL that stops answering', () => {
  let proxy: TcpProxy;
  let url: string;

  beforeEach(async () => {
    const stack = await testStack();
    proxy = await startTcpProxy(new URL(stack.databaseUrl).host);
    url = through(stack.databaseUrl, proxy.address);
  });

  afterEach(async () => {
    await proxy.close();
  });

  it('fails a query whose answer never comes as unavailable (503), and the next query works', async () => {
    const db = createDatabase({ url, poolSize: 1, statementTimeoutMs: 500 });
    try {
      assert.equal((await db.pool.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n, 1);
      // Every byte held for a minute: to the client, a network that lost the query.
      proxy.slow(60_000);
      const began = Date.now();
      const err = await db.pool.query('SELECT 2').then(
        () => undefined,
        (e: unknown) => e,
      );
      const waited = Date.now() - began;
      assert.ok(err instanceof Error, 'the query fails');
      assert.ok(isDatabaseUnavailable(err), `taken for PostgreSQL unavailable: ${err.message}`);
      assert.ok(waited < 15_000, `gave up after ${waited} ms, not the minute the answer would take`);
      proxy.slow(0);
      // The connection stuck on the lost answer was closed, not handed to the next query.
      assert.equal((await db.pool.query<{ n: number }>('SELECT 3 AS n')).rows[0]?.n, 3);
    } finally {
      proxy.slow(0);
      await db.close();
    }
  });

  it('closes a connection whose transaction could not be rolled back instead of reusing it', async () => {
    const db = createDatabase({ url, poolSize: 1, statementTimeoutMs: 500 });
    try {
      const failed = withTransaction(db.pool, async (client) => {
        proxy.slow(60_000);
        await client.query('SELECT 1');
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      const err = await failed;
      assert.ok(err instanceof Error && isDatabaseUnavailable(err), String(err));
      proxy.slow(0);
      const began = Date.now();
      assert.equal((await db.pool.query<{ n: number }>('SELECT 5 AS n')).rows[0]?.n, 5);
      assert.ok(Date.now() - began < 10_000, `answered in ${Date.now() - began} ms`);
    } finally {
      proxy.slow(0);
      await db.close();
    }
  });

  it('closes a connection whose readiness check timed out instead of reusing it', async () => {
    const db = createDatabase({ url, poolSize: 1, statementTimeoutMs: 30_000 });
    try {
      assert.equal(await databaseReachable(db.pool, 1_000), true);
      proxy.slow(60_000);
      assert.equal(await databaseReachable(db.pool, 300), false);
      proxy.slow(0);
      // On the one connection the check used, this query would wait out the held minute.
      const began = Date.now();
      assert.equal((await db.pool.query<{ n: number }>('SELECT 4 AS n')).rows[0]?.n, 4);
      assert.ok(Date.now() - began < 10_000, `answered in ${Date.now() - began} ms`);
    } finally {
      await db.close();
    }
  });
});
