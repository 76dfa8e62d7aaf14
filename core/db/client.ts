import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type PoolClient } from 'pg';
import { PrismaClient } from './generated/client';

export { Prisma } from './generated/client';
export type { PrismaClient } from './generated/client';

export interface Database {
  /** Prisma for ordinary reads and writes. */
  prisma: PrismaClient;
  /** The same pool, for the few hot paths one hand-written statement serves better. */
  pool: Pool;
  /**
   * Connections that commit without waiting for the WAL flush (`synchronous_commit=off`), for
   * bookkeeping no one is told was saved: rate-limit counters, a key's lastUsedAt, a run's partial
   * text as it streams. A crash may lose its last fraction of a second, and nothing else: it is
   * visible to every other connection at once, like any commit. Never for what a client is
   * answered (an admitted turn, a decision, a cancel, a run's ending).
   */
  bookkeeping: Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /** Fail a query rather than hang when PostgreSQL stops answering. */
  statementTimeoutMs?: number;
}

/**
 * How much longer than the server's statement timeout a query's answer may take to arrive before
 * the client gives up on the connection: the server's own timeout cannot fire for a query whose
 * bytes, or answer, the network lost, and a request would wait on it forever.
 */
const ANSWER_MARGIN_MS = 5_000;

export function createDatabase(options: DatabaseOptions): Database {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  const settings = {
    connectionString: options.url,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + ANSWER_MARGIN_MS,
  };
  const pool = new Pool({ ...settings, max: options.poolSize });
  const bookkeeping = new Pool({
    ...settings,
    max: Math.max(2, Math.ceil(options.poolSize / 2)),
    options: '-c synchronous_commit=off',
  });
  for (const p of [pool, bookkeeping]) {
    // A connection lost (PostgreSQL restarting) must not crash the process. Idle, the pool hears
    // it; checked out and between statements (a transaction waiting on other work, the
    // reconciler's lock held for its pass), only its client does: its holder's next statement
    // then fails as unavailable, and the connection is dropped when released.
    p.on('error', () => undefined);
    p.on('connect', (client) => client.on('error', () => undefined));
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    bookkeeping,
    async close() {
      await prisma.$disconnect();
      await Promise.all([pool.end(), bookkeeping.end()]);
    },
  };
}

/** Runs `work` in one transaction on one pooled connection: committed whole, or rolled back whole. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection whose ROLLBACK failed (its last answer lost, or PostgreSQL gone) is closed rather
  // than handed, mid-transaction or still busy, to the next query.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: Error) => {
      broken = rollbackErr;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * SQLSTATEs of a statement PostgreSQL rolled back whole to break a deadlock (40P01) or a
 * serialization conflict (40001) with another transaction: run again, it meets that one finished.
 */
const PG_CONFLICT = new Set(['40P01', '40001']);

/** Runs one self-contained statement (or transaction), again while PostgreSQL rolls it back for a conflict. */
export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !PG_CONFLICT.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
}

/** SQLSTATE classes and socket errors that mean PostgreSQL is down or restarting, not a bug. */
const PG_UNAVAILABLE = /^(08|57P0[1-3]|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE)/;
const PG_UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error)/;

/** Whether a failed statement failed because PostgreSQL could not be reached, not because of it. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (typeof code === 'string' && PG_UNAVAILABLE.test(code)) || PG_UNAVAILABLE_MESSAGE.test(err.message);
}

/** True when PostgreSQL answers a `SELECT 1` within `timeoutMs`. */
export async function databaseReachable(pool: Pool, timeoutMs: number): Promise<boolean> {
  const client = await pool.connect().catch(() => undefined);
  if (!client) return false;
  try {
    await client.query({ text: 'SELECT 1', query_timeout: timeoutMs } as never);
    client.release();
    return true;
  } catch (err) {
    // A connection whose answer is late is still busy with it: back in the pool, the next query
    // would queue behind it, so it is closed instead.
    client.release(err as Error);
    return false;
  }
}
