import assert from 'node:assert/strict';
import {
  createDatabase,
  databaseReachable,
  isDatabaseUnavailable,
  withTransaction,
  type Database,
} from '../../core/db/client';
import { testStack } from '../../testkit/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

/** A URL like `url` that reaches PostgreSQL through the proxy at `address`. */
function through(url: string, address: string): string {
  const u = new URL(url);
  u.host = address;
  return u.toString();
}

/** What `work` failed with, or undefined when it succeeded. */
const failureOf = (work: Promise<unknown>): Promise<unknown> =>
  work.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('database client: PostgreSQL that stops answering', () => {
  let proxy: TcpProxy;
  let url: string;
  let db: Database | undefined;

  /** The pool's one connection, through the proxy. */
  const open = (statementTimeoutMs: number): Database =>
    (db = createDatabase({ url, poolSize: 1, statementTimeoutMs }));

  /**
   * Once the network answers again, the pool's next query answers at once: no connection it
   * hands out still waits on an answer that was lost.
   */
  const nextQueryAnswersAtOnce = async (pool: Database['pool']) => {
    proxy.slow(0);
    const began = Date.now();
    assert.equal((await pool.query<{ n: number }>('SELECT 7 AS n')).rows[0]?.n, 7);
    assert.ok(Date.now() - began < 10_000, `answered in ${Date.now() - began} ms`);
  };

  beforeEach(async () => {
    const stack = await testStack();
    proxy = await startTcpProxy(new URL(stack.databaseUrl).host);
    url = through(stack.databaseUrl, proxy.address);
  });

  afterEach(async () => {
    proxy.slow(0);
    await db?.close();
    db = undefined;
    await proxy.close();
  });

  it('fails a query whose answer never comes as unavailable (503), and the next query works', async () => {
    const { pool } = open(500);
    assert.equal((await pool.query<{ n: number }>('SELECT 1 AS n')).rows[0]?.n, 1);
    // Every byte held for a minute: to the client, a network that lost the query.
    proxy.slow(60_000);
    const began = Date.now();
    const err = await failureOf(pool.query('SELECT 2'));
    const waited = Date.now() - began;
    assert.ok(err instanceof Error, 'the query fails');
    assert.ok(isDatabaseUnavailable(err), `taken for PostgreSQL unavailable: ${err.message}`);
    assert.ok(waited < 15_000, `gave up after ${waited} ms, not the minute the answer would take`);
    await nextQueryAnswersAtOnce(pool);
  });

  it('closes a connection whose transaction could not be rolled back instead of reusing it', async () => {
    const { pool } = open(500);
    const err = await failureOf(
      withTransaction(pool, async (client) => {
        proxy.slow(60_000);
        await client.query('SELECT 1');
      }),
    );
    assert.ok(err instanceof Error && isDatabaseUnavailable(err), String(err));
    await nextQueryAnswersAtOnce(pool);
  });

  it('keeps the process up when a connection held between statements is lost, and then serves from a new one', async () => {
    const { pool } = open(30_000);
    // Held as a transaction waiting on other work holds it, or the reconciler's lock for its pass.
    const held = await pool.connect();
    try {
      const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const lost = new Promise((resolve) => held.once('end', resolve));
      const { db: other } = await testStack();
      await other.pool.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
      // Unheard, the client's error event would have been thrown as an uncaught exception here.
      await lost;
      const failure = await failureOf(held.query('SELECT 1'));
      assert.ok(isDatabaseUnavailable(failure), String(failure));
    } finally {
      held.release(true);
    }
    assert.equal((await pool.query<{ n: number }>('SELECT 7 AS n')).rows[0]?.n, 7);
  });

  it('closes a connection whose readiness check timed out instead of reusing it', async () => {
    const { pool } = open(30_000);
    assert.equal(await databaseReachable(pool, 1_000), true);
    proxy.slow(60_000);
    assert.equal(await databaseReachable(pool, 300), false);
    await nextQueryAnswersAtOnce(pool);
  });
});
