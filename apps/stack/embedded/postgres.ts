import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { startChild, describeExit, type Exit } from '../process/child';
import { describeProcess, liveProcess, processesWorkingIn } from '../process/procfs';
import { reasonOf } from '../../../core/process/reason';

/**
 * PostgreSQL from the binaries the embedded-postgres package installs, run by us rather than by
 * that package's class: its start rejects with `undefined` (PostgreSQL's own reason lost), its exit
 * hooks stop the server on SIGINT/SIGTERM behind the caller's back, and it cannot put the server
 * in a process group of its own. Used by `npm start`, the tests and the bench.
 */
export interface EmbeddedPostgresHandle {
  pid: number;
  url(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** Settles when the server has exited, whoever stopped it. */
  exited: Promise<Exit>;
  /** The server's last log lines. */
  lastLines(): string;
  /**
   * Fast shutdown (SIGINT); after `graceMs`, the server and its backends are killed. Says whether
   * it stopped within the grace.
   */
  stop(graceMs?: number): Promise<boolean>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** fsync and synchronous_commit on: a commit is on disk before it is answered. See embeddedPostgresDurable. */
  durable: boolean;
  /** Called with each line the server logs. */
  onLog?: (line: string) => void;
  /** Loads pg_stat_statements, so statements can be counted (the bench does, per turn). */
  statementStats?: boolean;
}

/**
 * The one switch for the embedded PostgreSQL's durability. Unset (or true), a commit is flushed to
 * disk before the client hears of it, so an acknowledged write survives a crash or power loss.
 * `EMBEDDED_POSTGRES_DURABLE=false` turns fsync and synchronous_commit off: faster, and a crash
 * may lose the last moments of commits (a power loss may corrupt the cluster). The test suites set
 * it false for speed; `npm start` and the bench keep the default unless it is set.
 */
export const DURABILITY_SETTING = 'EMBEDDED_POSTGRES_DURABLE';

export function embeddedPostgresDurable(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[DURABILITY_SETTING];
  if (value === undefined || value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${DURABILITY_SETTING} must be true or false (1 or 0), not "${value.slice(0, 20)}"`);
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const READY_LINE = 'database system is ready to accept connections';
const READY_TIMEOUT_MS = 120_000;
/** A server killed a moment ago may still be exiting: how long its data folder may stay busy. */
const EXITING_GRACE_MS = 3_000;
const exec = promisify(execFile);

async function binaries(): Promise<{ postgres: string; initdb: string }> {
  // The binaries come in a per-platform package that embedded-postgres depends on.
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = createRequire(require.resolve('embedded-postgres')).resolve(pkg);
  } catch {
    throw new Error(`no PostgreSQL binaries for this platform: the package ${pkg} is not installed`);
  }
  return (await import(pathToFileURL(entry).href)) as { postgres: string; initdb: string };
}

/** PostgreSQL refuses to run as root: as root, it runs as the system user `postgres`, created if missing. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const ids = async () => {
    const [uid, gid] = await Promise.all([exec('id', ['-u', USER]), exec('id', ['-g', USER])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await ids();
  } catch {
    try {
      await exec('groupadd', ['-f', USER]);
      await exec('useradd', ['--system', '--no-create-home', '-g', USER, USER]);
    } catch (err) {
      throw new Error(
        `running as root, and the system user "${USER}" could not be created: ${reasonOf(err)}`,
      );
    }
    return ids();
  }
}

/**
 * Creates the cluster in a sibling folder and renames it into place, so a start killed during
 * initdb leaves no half-made cluster behind.
 */
async function initialise(
  initdb: string,
  dataDir: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  if (existsSync(dataDir) && (await readdir(dataDir)).length > 0) {
    throw new Error(
      `${dataDir} is not empty but holds no PostgreSQL cluster (no PG_VERSION): move it away or choose another data folder`,
    );
  }
  const staging = `${dataDir}.initdb`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true, mode: 0o700 });
  const secrets = await mkdtemp(path.join(tmpdir(), 'pg-init-'));
  const pwfile = path.join(secrets, 'pw');
  await writeFile(pwfile, `${PASSWORD}\n`);
  if (owner) {
    await chown(staging, owner.uid, owner.gid);
    await chown(secrets, owner.uid, owner.gid);
    await chown(pwfile, owner.uid, owner.gid);
  }
  try {
    await exec(
      initdb,
      [
        `--pgdata=${staging}`,
        '--auth=password',
        `--username=${USER}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--lc-messages=C',
      ],
      { ...owner, env: { ...process.env, LC_MESSAGES: 'C' } },
    );
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`initdb failed for ${dataDir}: ${stderr || reasonOf(err)}`);
  } finally {
    await rm(secrets, { recursive: true, force: true });
  }
  await rm(dataDir, { recursive: true, force: true });
  await rename(staging, dataDir);
}

/**
 * A postmaster.pid left by a server that is gone (killed with its whole tree, say) is removed: the
 * pid in it may be a zombie not yet reaped, or belong to another program by now, and PostgreSQL
 * would refuse to start over either. A server still working in the folder is named instead.
 */
async function clearStaleLock(dataDir: string, log: (line: string) => void): Promise<void> {
  const lockFile = path.join(dataDir, 'postmaster.pid');
  const lock = await readFile(lockFile, 'utf8').catch(() => undefined);
  if (lock === undefined) return;
  const pid = Number(lock.split('\n')[0]);
  const holder = async () => {
    const owner = await liveProcess(pid);
    if (owner && /postgres/.test(owner.command)) return owner;
    return (await processesWorkingIn(dataDir))[0];
  };
  const deadline = Date.now() + EXITING_GRACE_MS;
  let found = await holder();
  while (found && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    found = await holder();
  }
  if (found) {
    throw new Error(`the PostgreSQL data folder ${dataDir} is in use by ${describeProcess(found)}`);
  }
  await rm(lockFile, { force: true });
  log(`removed the stale lock ${lockFile} (its server, pid ${pid}, is gone)`);
}

/** Starts PostgreSQL on 127.0.0.1:`port`, initialising the data folder on first use. */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const { dataDir, port } = options;
  const log = options.onLog ?? (() => undefined);
  const { postgres, initdb } = await binaries();
  const owner = await serverUser();
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) await clearStaleLock(dataDir, log);
  else await initialise(initdb, dataDir, owner);

  const sync = options.durable ? 'on' : 'off';
  const server = startChild({
    name: 'PostgreSQL',
    command: postgres,
    args: [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // TCP only: a Unix socket would leave one more lock file (in /tmp) for a crash to strand.
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      '-c',
      `fsync=${sync}`,
      '-c',
      `synchronous_commit=${sync}`,
      '-c',
      'lc_messages=C',
      ...(options.statementStats ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    ],
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...owner,
    // Immediate shutdown if whoever started it dies; the next start recovers from the WAL.
    lifelineSignal: 'SIGQUIT',
    echo: false,
  });
  server.onLine(log);
  const ready = await new Promise<'ready' | 'timeout' | Exit>((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS);
    server.onLine((line) => {
      if (!line.includes(READY_LINE)) return;
      clearTimeout(timer);
      resolve('ready');
    });
    void server.exited.then((exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
  if (ready !== 'ready') {
    if (ready === 'timeout') await server.stop('SIGQUIT', 5_000);
    const why =
      ready === 'timeout'
        ? `was not ready within ${READY_TIMEOUT_MS / 1000} s`
        : `exited (${describeExit(ready)})`;
    throw new Error(`PostgreSQL on port ${port} (data in ${dataDir}) ${why}:\n${indent(server.lastLines())}`);
  }

  const url = (database: string) =>
    `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return {
    pid: server.pid,
    url,
    async createDatabase(name) {
      const client = new Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
    },
    exited: server.exited,
    lastLines: () => server.lastLines(),
    stop: (graceMs = 15_000) => server.stop('SIGINT', graceMs),
  };
}

function indent(text: string): string {
  return (text || '(it printed nothing)')
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
