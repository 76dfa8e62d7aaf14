/**
 * The Temporal a bench run measures on. `dev` (the default): the dev server the tests use, one
 * process on SQLite. `cluster` (`npm run bench -- --engine=cluster`, or BENCH_ENGINE): the
 * production topology's Temporal, the server's four services as processes of their own on an
 * embedded PostgreSQL, on the configuration in deploy/temporal, as `npm run start:cluster` runs it.
 * Both sides of every ratio run on the engine picked, so each row compares like with like.
 */
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { embeddedPostgresDurable, startEmbeddedPostgres } from '../apps/stack/embedded/postgres';
import { lowerAutogroup } from '../apps/stack/process/priority';
import { listenerOf } from '../apps/stack/process/procfs';
import { freePort } from '../core/process/ports';
import type { TestStack } from '../testkit/stack';
import { startTestCluster, type TestCluster } from '../testkit/temporal-cluster';

export type Engine = 'dev' | 'cluster';

export function engineOf(argv: readonly string[], env: NodeJS.ProcessEnv): Engine {
  const value =
    argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length) ?? env.BENCH_ENGINE ?? 'dev';
  if (value !== 'dev' && value !== 'cluster') {
    throw new Error(`bench: unknown engine "${value.slice(0, 20)}"; pick dev or cluster`);
  }
  return value;
}

/**
 * Starts PostgreSQL and the Temporal cluster as children of the bench (so its CPU rows count
 * them, service by service), the cluster's services at `nice` as `npm run start:cluster` runs
 * them, and points testkit at them (TEST_DATABASE_URL, TEST_TEMPORAL_ADDRESS). Resolves to the
 * function that stops them.
 */
export async function startClusterEngine(nice: number): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-cluster-'));
  // When run as root, PostgreSQL runs as its own system user, which must reach the folder.
  await chmod(dir, 0o755);
  const postgres = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    port: await freePort(),
    durable: embeddedPostgresDurable(),
  });
  let cluster: TestCluster | undefined;
  const stop = async () => {
    await cluster?.stop('SIGTERM');
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    cluster = await startTestCluster(postgres, { nice });
    const adminUrl = postgres.url('postgres');
    process.env.TEST_DATABASE_URL = adminUrl;
    process.env.TEST_TEMPORAL_ADDRESS = cluster.address;
    return stop;
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The dev server the tests' stack started (through the SDK, which says nothing of its pid), found
 * by the port it listens on and lowered to `nice` like the stack's (apps/stack/process/priority.ts):
 * each thread it has (a thread it starts later inherits its starter's nice), and its session's
 * weight when it leads one. Unlike `npm start`'s children it may share the bench's session, where
 * the threads' nice is what counts.
 */
export async function lowerDevServer(stack: TestStack, nice: number): Promise<void> {
  const port = Number(stack.temporalAddress.split(':').pop());
  const server = await listenerOf(port);
  if (!server) throw new Error(`bench: no process listens on the dev server's port ${port}`);
  for (const tid of await readdir(`/proc/${server.pid}/task`)) {
    try {
      os.setPriority(Number(tid), Math.max(nice, os.getPriority(Number(tid))));
    } catch {
      // ESRCH: the thread ended meanwhile.
    }
  }
  await lowerAutogroup(server.pid, nice);
}
