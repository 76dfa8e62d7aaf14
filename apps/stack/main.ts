import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { parseDuration } from '../../core/config/duration';
import { migrate } from '../../core/db/migrator';
import {
  embeddedPostgresDurable,
  startEmbeddedPostgres,
  DURABILITY_SETTING,
  type EmbeddedPostgresHandle,
} from '../../core/embedded/postgres';
import { devServerArgs, resolveTemporalCli } from '../../core/embedded/temporal-cli';
import { describeExit, startChild, type Child } from '../../core/process/child';
import { portProblem } from '../../core/process/ports';
import { reasonOf } from '../../core/process/reason';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { lockDataFolder } from './lock';

/**
 * `npm start`: the whole service on embedded defaults, as one process tree. PostgreSQL and the
 * Temporal dev server are started here unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere.
 *
 * Each child runs in a process group of its own (see core/process/child.ts), so a Ctrl-C reaches
 * this process alone and the stop goes in order: the gateway (no new requests, those in flight
 * answered), the worker (its activities finish or are cancelled and reported, so the next start
 * resumes them at once), the Temporal server, PostgreSQL; each within a bounded grace.
 */
const ROOT = path.resolve(__dirname, '../..');
const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
/** A folder as the messages show it: relative to where `npm start` runs when inside it. */
const shown = (p: string) => (p.startsWith(ROOT + path.sep) ? path.relative(ROOT, p) : p);

let stopping = false;
let postgres: EmbeddedPostgresHandle | undefined;
let postgresStarting: Promise<EmbeddedPostgresHandle> | undefined;
let temporal: Child | undefined;
let worker: Child | undefined;
let gateway: Child | undefined;
let releaseLock: (() => Promise<void>) | undefined;
let grace = 10_000;

function portSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be a port number, not "${raw.slice(0, 20)}"`);
  }
  return port;
}

async function appSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'app-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

/** After its start, a child that exits on its own takes the whole stack down with it. */
function watch(child: { name: string; exited: Child['exited'] }, lastLines?: () => string): void {
  void child.exited.then((exit) => {
    if (stopping) return;
    say(`${child.name} exited (${describeExit(exit)}); stopping everything`);
    const lines = lastLines?.();
    if (lines) process.stdout.write(`${lines}\n`);
    void stop(1);
  });
}

async function waitForTemporal(address: string, server: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!server.running()) {
      const exit = await server.exited;
      throw new Error(
        `${server.name} exited (${describeExit(exit)}) before it answered on ${address}:\n${server.lastLines()}`,
      );
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(`${server.name} did not answer on ${address} within 60 s: ${reasonOf(err)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function startApp(name: string, script: string, env: NodeJS.ProcessEnv): Child {
  return startChild({
    name,
    command: process.execPath,
    args: ['--import', 'tsx', script],
    cwd: ROOT,
    env,
    ipc: true,
    lifelineSignal: 'SIGTERM',
  });
}

/** Resolves on the child's "ready" (core/process/ready.ts); fails, with its last words, if it exits first. */
async function waitForReady(child: Child): Promise<void> {
  const outcome = await Promise.race([
    new Promise<'ready'>((resolve) => child.process.once('message', () => resolve('ready'))),
    child.exited,
  ]);
  if (outcome !== 'ready') {
    throw new Error(
      `${child.name} exited (${describeExit(outcome)}) before it was ready:\n${child.lastLines()}`,
    );
  }
}

async function stopChild(child: Child | undefined, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!child) return;
  const started = Date.now();
  const inTime = await child.stop(signal, graceMs);
  say(
    inTime
      ? `${child.name} stopped (${((Date.now() - started) / 1000).toFixed(1)} s)`
      : `${child.name} did not stop within ${graceMs / 1000} s; killed it`,
  );
}

/** The ordered stop, each step bounded; then `[stack] stopped` and the exit. */
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping...');
  // The gateway and the worker bound their own stop by SHUTDOWN_GRACE; the margin is for the
  // cancelled activities to report, and the connections to close.
  await stopChild(gateway, 'SIGTERM', grace + 5_000);
  await stopChild(worker, 'SIGTERM', grace + 10_000);
  await stopChild(temporal, 'SIGTERM', 10_000);
  const pg = postgres ?? (await postgresStarting?.catch(() => undefined));
  if (pg) {
    const started = Date.now();
    const inTime = await pg.stop(15_000);
    say(
      inTime
        ? `PostgreSQL stopped (${((Date.now() - started) / 1000).toFixed(1)} s)`
        : 'PostgreSQL did not stop within 15 s; killed it',
    );
  }
  await releaseLock?.().catch(() => undefined);
  say('stopped');
  process.exit(code);
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));

  const dataDir = path.resolve(ROOT, process.env.STACK_DATA_DIR || '.data');
  const pgPort = portSetting('STACK_POSTGRES_PORT', 5433);
  const temporalPort = portSetting('STACK_TEMPORAL_PORT', 7233);
  const temporalUiPort = portSetting('STACK_TEMPORAL_UI_PORT', 8233);
  const gatewayPort = portSetting('PORT', 3000);
  const metricsPort = portSetting('METRICS_PORT', 9464);
  const workerHttpPort = portSetting('WORKER_HTTP_PORT', 9465);
  const gatewayHost = process.env.HOST || '0.0.0.0';
  const graceSetting = parseDuration(process.env.SHUTDOWN_GRACE ?? '10s');
  if (graceSetting === undefined) throw new Error('SHUTDOWN_GRACE must be a duration such as 10s');
  grace = graceSetting;
  const embeddedPostgres = !process.env.DATABASE_URL;
  const embeddedTemporal = !process.env.TEMPORAL_ADDRESS;

  // Everything in the way is named at once, with the process that holds it.
  await mkdir(dataDir, { recursive: true });
  const problems: string[] = [];
  const lock = await lockDataFolder(dataDir);
  if (typeof lock === 'string') problems.push(lock);
  else releaseLock = lock;
  const ports: [number, string, string][] = [
    ...(embeddedPostgres
      ? [[pgPort, '127.0.0.1', 'PostgreSQL (STACK_POSTGRES_PORT)'] as [number, string, string]]
      : []),
    ...(embeddedTemporal
      ? [
          [temporalPort, '127.0.0.1', 'the Temporal dev server (STACK_TEMPORAL_PORT)'] as [
            number,
            string,
            string,
          ],
          [temporalUiPort, '127.0.0.1', 'the Temporal Web UI (STACK_TEMPORAL_UI_PORT)'] as [
            number,
            string,
            string,
          ],
        ]
      : []),
    [gatewayPort, gatewayHost, 'the gateway (PORT)'],
    [metricsPort, gatewayHost, "the gateway's metrics (METRICS_PORT)"],
    [workerHttpPort, gatewayHost, "the worker's health and metrics (WORKER_HTTP_PORT)"],
  ];
  for (const [port, host, what] of ports) {
    if (port === 0) continue;
    const problem = await portProblem(port, host);
    if (problem) problems.push(`${what}: ${problem}`);
  }
  if (problems.length) throw new Error(`cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

  const env: NodeJS.ProcessEnv = {
    ALLOW_SIGN_UP: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    STORAGE_DRIVER: 'local',
    STORAGE_LOCAL_DIR: path.join(dataDir, 'files'),
    ...process.env,
    APP_SECRET: process.env.APP_SECRET ?? (await appSecret(dataDir)),
  };

  if (embeddedPostgres) {
    const pgDir = path.join(dataDir, 'postgres');
    const durable = embeddedPostgresDurable();
    say(`starting embedded PostgreSQL on port ${pgPort} (data in ${shown(pgDir)})`);
    if (!durable) say(`${DURABILITY_SETTING}=false: commits are not flushed to disk; a crash can lose them`);
    postgresStarting = startEmbeddedPostgres({
      dataDir: pgDir,
      port: pgPort,
      durable,
      onLog: (line) => {
        if (/^\S+ \S+ \S+ \[\d+\] (FATAL|PANIC):/.test(line) || line.includes('removed the stale lock')) {
          say(`PostgreSQL: ${line}`);
        }
      },
    });
    postgres = await postgresStarting;
    const pg = postgres;
    watch({ name: 'PostgreSQL', exited: pg.exited }, () => pg.lastLines());
    if (stopping) return;
    await postgres.createDatabase('agent_chat');
    env.DATABASE_URL = postgres.url('agent_chat');
  }

  if (embeddedTemporal) {
    const cli = await resolveTemporalCli();
    if (stopping) return;
    const dbFile = path.join(dataDir, 'temporal.db');
    say(`starting the Temporal dev server on port ${temporalPort} (history in ${shown(dbFile)})`);
    temporal = startChild({
      name: 'the Temporal dev server',
      command: cli,
      args: devServerArgs({
        port: temporalPort,
        uiPort: temporalUiPort,
        dbFile,
        searchAttributes: SEARCH_ATTRIBUTES,
      }),
      env: process.env,
      lifelineSignal: 'SIGTERM',
    });
    env.TEMPORAL_ADDRESS = `127.0.0.1:${temporalPort}`;
    await waitForTemporal(env.TEMPORAL_ADDRESS, temporal);
    watch(temporal);
  }

  if (stopping) return;
  const migrated = await migrate(env.DATABASE_URL ?? '');
  say(`migrations: ${migrated.applied.length} applied, ${migrated.alreadyApplied.length} already in place`);

  if (stopping) return;
  worker = startApp('the worker', 'apps/worker/main.ts', env);
  await waitForReady(worker);
  watch(worker);
  if (stopping) return;
  gateway = startApp('the gateway', 'apps/gateway/main.ts', env);
  await waitForReady(gateway);
  watch(gateway);

  say('ready');
  process.stdout.write(
    [
      '',
      `  Gateway          http://localhost:${gatewayPort}   (API reference at /docs)`,
      process.env.TEMPORAL_ADDRESS
        ? `  Temporal         ${process.env.TEMPORAL_ADDRESS}`
        : `  Temporal Web UI  http://localhost:${temporalUiPort}`,
      `  Metrics          http://localhost:${metricsPort}/metrics (gateway), http://localhost:${workerHttpPort}/metrics (worker)`,
      `  Data             ${shown(dataDir)}`,
      '',
      '  Credentials: sign-up is open in this mode.',
      `    curl -c jar -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a-long-password"}' http://localhost:${gatewayPort}/api/auth/sign-up`,
      `    curl -b jar -c jar -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a-long-password"}' http://localhost:${gatewayPort}/api/auth/sign-in`,
      `    curl -b jar -H 'content-type: application/json' -H 'origin: http://localhost:${gatewayPort}' -d '{"name":"dev"}' http://localhost:${gatewayPort}/api/keys`,
      '',
      '  Ctrl-C (or SIGTERM) stops everything, in order.',
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  // A stop requested during the start fails the step in progress; that is no start error.
  if (stopping) return;
  say(`failed: ${reasonOf(err)}`);
  void stop(1);
});
