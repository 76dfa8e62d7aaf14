/**
 * The Temporal a bench run measures on. `dev` (the default): the dev server the tests use, one
 * process on SQLite. `cluster` (`npm run bench -- --engine=cluster`, or BENCH_ENGINE): the
 * production topology's Temporal, the server's four services as processes of their own on an
 * embedded PostgreSQL, on the configuration in deploy/temporal, as `npm run start:cluster` runs it.
 * Both sides of every ratio run on the engine picked, so each row compares like with like.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { embeddedPostgresDurable, startEmbeddedPostgres } from '../core/embedded/postgres';
import {
  installTemporalSchemas,
  registerNamespace,
  resolveClusterTool,
  startTemporalService,
  temporalServerEnv,
  TEMPORAL_SERVICES,
  waitForFrontend,
} from '../core/embedded/temporal-cluster';
import type { Child } from '../core/process/child';
import { freePort } from '../core/process/ports';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

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
 * them, service by service), and points testkit at them (TEST_DATABASE_URL,
 * TEST_TEMPORAL_ADDRESS). Resolves to the function that stops them.
 */
export async function startClusterEngine(): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-cluster-'));
  // When run as root, PostgreSQL runs as its own system user, which must reach the folder.
  await chmod(dir, 0o755);
  const postgres = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    port: await freePort(),
    durable: embeddedPostgresDurable(),
  });
  const services: Child[] = [];
  const stop = async () => {
    for (const service of [...services].reverse()) await service.stop('SIGTERM', 10_000);
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const adminUrl = postgres.url('postgres');
    const server = await resolveClusterTool('server', { find: true });
    await installTemporalSchemas(await resolveClusterTool('sql-tool', { find: true }), adminUrl);
    const ports = {
      frontend: await freePort(),
      frontendHttp: await freePort(),
      history: await freePort(),
      matching: await freePort(),
      worker: await freePort(),
      membership: {
        frontend: await freePort(),
        history: await freePort(),
        matching: await freePort(),
        worker: await freePort(),
      },
      ui: 0,
    };
    const env = temporalServerEnv(adminUrl, ports);
    const address = `127.0.0.1:${ports.frontend}`;
    for (const name of TEMPORAL_SERVICES) {
      const service = startTemporalService(server, name, env);
      services.push(service);
      if (name === 'frontend') await waitForFrontend(address, service);
    }
    await registerNamespace(address, 'default', SEARCH_ATTRIBUTES);
    process.env.TEST_DATABASE_URL = adminUrl;
    process.env.TEST_TEMPORAL_ADDRESS = address;
    return stop;
  } catch (err) {
    await stop();
    throw err;
  }
}
