import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { migrate } from '../../core/db/migrator';
import {
  embeddedPostgresDurable,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../core/embedded/postgres';
import { devServerArgs, resolveTemporalCli } from '../../core/embedded/temporal-cli';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';

/**
 * `npm start`: the whole service on embedded defaults, as one process tree. PostgreSQL and the
 * Temporal dev server are started here unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere.
 */
const ROOT = path.resolve(__dirname, '../..');
const DATA = path.join(ROOT, '.data');
const PG_PORT = Number(process.env.STACK_POSTGRES_PORT ?? 5433);
const TEMPORAL_PORT = Number(process.env.STACK_TEMPORAL_PORT ?? 7233);
const TEMPORAL_UI_PORT = Number(process.env.STACK_TEMPORAL_UI_PORT ?? 8233);

const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
const children: { name: string; proc: ChildProcess }[] = [];
let postgres: EmbeddedPostgresHandle | undefined;
let stopping = false;

async function appSecret(): Promise<string> {
  const file = path.join(DATA, 'app-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

function startChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // The IPC channel carries one message: the child's "ready" (see core/process/ready.ts).
  const proc = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push({ name, proc });
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited (${signal ?? code}); stopping everything`);
    void shutdown(1);
  });
  return proc;
}

async function waitForTemporal(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.close();
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`Temporal did not answer on ${address}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function waitForReady(proc: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    proc.once('message', () => resolve());
    proc.once('exit', (code) => reject(new Error(`${name} exited with ${code} before it was ready`)));
  });
}

async function stopChild({ name, proc }: { name: string; proc: ChildProcess }): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => {
    say(`${name} did not stop in 15 s; killing it`);
    proc.kill('SIGKILL');
  }, 15_000);
  await exited;
  clearTimeout(timer);
}

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping...');
  // Reverse start order: gateway, worker, then Temporal, then PostgreSQL.
  for (const child of [...children].reverse()) await stopChild(child);
  await postgres?.stop();
  say('stopped');
  process.exit(code);
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  await mkdir(DATA, { recursive: true });

  const env: NodeJS.ProcessEnv = {
    ALLOW_SIGN_UP: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    STORAGE_DRIVER: 'local',
    STORAGE_LOCAL_DIR: path.join(DATA, 'files'),
    ...process.env,
    APP_SECRET: process.env.APP_SECRET ?? (await appSecret()),
  };

  if (!process.env.DATABASE_URL) {
    say(`starting embedded PostgreSQL on port ${PG_PORT} (data in .data/postgres)`);
    postgres = await startEmbeddedPostgres({
      dataDir: path.join(DATA, 'postgres'),
      port: PG_PORT,
      durable: embeddedPostgresDurable(),
    });
    await postgres.createDatabase('agent_chat');
    env.DATABASE_URL = postgres.url('agent_chat');
  }

  if (!process.env.TEMPORAL_ADDRESS) {
    const cli = await resolveTemporalCli();
    say(`starting the Temporal dev server on port ${TEMPORAL_PORT} (history in .data/temporal.db)`);
    startChild(
      'temporal',
      cli,
      devServerArgs({
        port: TEMPORAL_PORT,
        uiPort: TEMPORAL_UI_PORT,
        dbFile: path.join(DATA, 'temporal.db'),
        searchAttributes: SEARCH_ATTRIBUTES,
      }),
      env,
    );
    env.TEMPORAL_ADDRESS = `127.0.0.1:${TEMPORAL_PORT}`;
    await waitForTemporal(env.TEMPORAL_ADDRESS, 60_000);
  }

  const migrated = await migrate(env.DATABASE_URL ?? '');
  say(`migrations: ${migrated.applied.length} applied, ${migrated.alreadyApplied.length} already in place`);

  const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
  await waitForReady(startChild('worker', tsx, ['apps/worker/main.ts'], env), 'worker');
  await waitForReady(startChild('gateway', tsx, ['apps/gateway/main.ts'], env), 'gateway');

  const port = env.PORT ?? '3000';
  say('ready');
  process.stdout.write(
    [
      '',
      `  Gateway          http://localhost:${port}   (API reference at /docs)`,
      process.env.TEMPORAL_ADDRESS
        ? `  Temporal         ${process.env.TEMPORAL_ADDRESS}`
        : `  Temporal Web UI  http://localhost:${TEMPORAL_UI_PORT}`,
      '',
      '  Credentials: sign-up is open in this mode.',
      `    curl -c jar -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a-long-password"}' http://localhost:${port}/api/auth/sign-up`,
      `    curl -b jar -c jar -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a-long-password"}' http://localhost:${port}/api/auth/sign-in`,
      `    curl -b jar -H 'content-type: application/json' -H 'origin: http://localhost:${port}' -d '{"name":"dev"}' http://localhost:${port}/api/keys`,
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

main().catch(async (err: Error) => {
  say(`failed: ${err.message}`);
  await shutdown(1);
});
