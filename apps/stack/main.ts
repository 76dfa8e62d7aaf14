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
} from './embedded/postgres';
import { devServerArgs, resolveTemporalCli } from './embedded/temporal-cli';
import { applyNamespaceRetention, namespaceRetentionMs } from '../../core/temporal/namespace-retention';
import {
  defaultClusterPorts,
  installTemporalSchemas,
  portsOf,
  registerNamespace,
  resolveClusterTool,
  startTemporalService,
  startTemporalUi,
  temporalServerEnv,
  TEMPORAL_SERVICES,
  waitForFrontend,
  type ClusterPorts,
} from './embedded/temporal-cluster';
import { describeExit, startChild, type Child } from './process/child';
import { portProblem } from './process/ports';
import { BACKGROUND_NICE, backgroundNiceSetting } from './process/priority';
import { reasonOf } from '../../core/process/reason';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { embeddedDefaults } from './defaults';
import { lockDataFolder } from './lock';

/**
 * `npm start`: the whole service on embedded defaults, as one process tree. PostgreSQL and the
 * Temporal dev server are started here unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere.
 *
 * `npm run start:cluster` (--cluster): the production topology on one machine. Temporal runs as a
 * cluster on PostgreSQL (apps/stack/embedded/temporal-cluster.ts: the four services as processes of
 * their own, the schema installed or upgraded by the SQL tool, the UI server), with two gateways
 * on one address (apps/stack/gateways.ts) and two workers. A process of the cluster that dies is
 * started again, as an orchestrator would; its data stays in STACK_DATA_DIR (.data-cluster).
 *
 * Each child runs in a process group of its own (see apps/stack/process/child.ts), so a Ctrl-C reaches
 * this process alone and the stop goes in order: the gateway (no new requests, those in flight
 * answered), the worker (its activities finish or are cancelled and reported, so the next start
 * resumes them at once), the Temporal server, PostgreSQL; each within a bounded grace.
 */
const ROOT = path.resolve(__dirname, '../..');
const CLUSTER = process.argv.includes('--cluster');
const say = (line: string) => process.stdout.write(`[${CLUSTER ? 'cluster' : 'stack'}] ${line}\n`);
/** A folder as the messages show it: relative to where `npm start` runs when inside it. */
const shown = (p: string) => (p.startsWith(ROOT + path.sep) ? path.relative(ROOT, p) : p);

let stopping = false;
let postgres: EmbeddedPostgresHandle | undefined;
let postgresStarting: Promise<EmbeddedPostgresHandle> | undefined;
/** The dev server; or the UI server and the cluster's services, in the order they stop. */
const temporal: Child[] = [];
const workers: Child[] = [];
/** The gateway; in the cluster, the process that runs the gateways. */
let gateway: Child | undefined;
let releaseLock: (() => Promise<void>) | undefined;
let grace = 10_000;
/** The Temporal server's and the workers' nice value (STACK_BACKGROUND_NICE, apps/stack/process/priority.ts). */
let backgroundNice = BACKGROUND_NICE;

function portSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be a port number, not "${raw.slice(0, 20)}"`);
  }
  return port;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function appSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'app-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

/**
 * After its start, a child that exits on its own takes the whole stack down with it; in the
 * cluster, one that has a `restart` is started again instead, as an orchestrator would.
 */
function watch(
  child: { name: string; pid?: number; exited: Child['exited'] },
  lastLines?: () => string,
  restart?: () => Promise<Child>,
): void {
  void child.exited.then(async (exit) => {
    if (stopping) return;
    if (restart) {
      say(`${child.name} (pid ${child.pid}) exited (${describeExit(exit)}); starting it again`);
      try {
        const next = await restart();
        if (!stopping) say(`${next.name} running again (pid ${next.pid})`);
      } catch (err) {
        if (stopping) return;
        say(`${child.name} could not be started again: ${reasonOf(err)}; stopping everything`);
        void stop(1);
      }
      return;
    }
    say(`${child.name} exited (${describeExit(exit)}); stopping everything`);
    const lines = lastLines?.();
    if (lines) process.stdout.write(`${lines}\n`);
    void stop(1);
  });
}

/** A child kept in `slots[index]` and, in the cluster, started again whenever it dies. */
async function keep(slots: Child[], index: number, start: () => Promise<Child>): Promise<Child> {
  const child = await start();
  slots[index] = child;
  await reportPriority(child);
  watch(child, () => child.lastLines(), CLUSTER ? () => keep(slots, index, start) : undefined);
  return child;
}

/** Says so when a child's session kept its full CPU weight (apps/stack/process/priority.ts). */
async function reportPriority(child: Child): Promise<void> {
  if (await child.prioritized) return;
  say(
    `${child.name}: the kernel kept refusing to lower its session's CPU weight; only its threads run at nice ${backgroundNice}`,
  );
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

/** One port per process of a kind: `base`, base + 2, ... (0 stays 0: the OS picks each). */
function nthPort(base: number, index: number): number {
  return base === 0 ? 0 : base + 2 * index;
}

/** The cluster's ports: the frontend and UI as `npm start` has them, the others by the names the
 * server's config template reads (deploy/temporal/production.yaml), Temporal's defaults otherwise. */
function clusterPorts(frontend: number, ui: number): ClusterPorts {
  const defaults = defaultClusterPorts(frontend, ui);
  const membership = (name: string, fallback: number) => {
    const port = portSetting(name, fallback);
    // The server records it in a PostgreSQL smallint; a larger one fails deep in its start.
    if (port > 32_767)
      throw new Error(`${name} must be below 32768 (Temporal keeps it in a smallint), not ${port}`);
    return port;
  };
  return {
    ...defaults,
    frontendHttp: portSetting('FRONTEND_HTTP_PORT', defaults.frontendHttp),
    history: portSetting('HISTORY_GRPC_PORT', defaults.history),
    matching: portSetting('MATCHING_GRPC_PORT', defaults.matching),
    worker: portSetting('WORKER_GRPC_PORT', defaults.worker),
    membership: {
      frontend: membership('FRONTEND_MEMBERSHIP_PORT', defaults.membership.frontend),
      history: membership('HISTORY_MEMBERSHIP_PORT', defaults.membership.history),
      matching: membership('MATCHING_MEMBERSHIP_PORT', defaults.membership.matching),
      worker: membership('WORKER_MEMBERSHIP_PORT', defaults.membership.worker),
    },
  };
}

async function waitForHttp(url: string, child: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!child.running())
      throw new Error(`${child.name} exited before it answered on ${url}:\n${child.lastLines()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${child.name} did not answer on ${url}: ${reasonOf(err)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * The Temporal cluster: schemas installed or upgraded, the frontend alone first (on an empty
 * database the services race to write the cluster's metadata), then history, matching and worker;
 * the namespace and search attributes; the UI server. Says the address of its frontend.
 */
async function startTemporalCluster(adminUrl: string, ports: ClusterPorts): Promise<string> {
  // One after the other, so a first build's progress lines are read one tool at a time.
  const server = await resolveClusterTool('server');
  const sqlTool = await resolveClusterTool('sql-tool');
  const uiServer = await resolveClusterTool('ui-server');
  if (stopping) return '';
  for (const line of await installTemporalSchemas(sqlTool, adminUrl)) say(`Temporal database ${line}`);
  const env = temporalServerEnv(adminUrl, ports);
  const address = `127.0.0.1:${ports.frontend}`;
  for (const [index, service] of TEMPORAL_SERVICES.entries()) {
    if (stopping) return '';
    const child = await keep(temporal, index, async () => {
      const started = startTemporalService(server, service, env, { nice: backgroundNice });
      if (service === 'frontend') await waitForFrontend(address, started);
      return started;
    });
    say(`Temporal ${service} service started (pid ${child.pid})`);
  }
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  await registerNamespace(address, namespace, SEARCH_ATTRIBUTES);
  say(`namespace ${namespace} and its ${SEARCH_ATTRIBUTES.length} search attributes registered`);
  if (stopping) return '';
  const ui = await keep(temporal, TEMPORAL_SERVICES.length, async () => {
    const started = startTemporalUi(uiServer, { frontendAddress: address, port: ports.ui, namespace });
    await waitForHttp(`http://127.0.0.1:${ports.ui}/`, started);
    return started;
  });
  say(`Temporal UI server started (pid ${ui.pid})`);
  return address;
}

/** The namespace of the Temporal this stack started keeps closed workflows TEMPORAL_NAMESPACE_RETENTION. */
async function setRetention(address: string, retentionMs: number): Promise<void> {
  if (stopping || !address) return;
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  const { changed } = await applyNamespaceRetention(address, namespace, retentionMs);
  if (changed) say(`namespace ${namespace} keeps closed workflows ${retentionMs / 86_400_000} days`);
}

function startApp(name: string, script: string, env: NodeJS.ProcessEnv, nice = 0): Child {
  return startChild({
    name,
    command: process.execPath,
    args: ['--import', 'tsx', script],
    cwd: ROOT,
    env,
    ipc: true,
    lifelineSignal: 'SIGTERM',
    nice,
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
  await Promise.all(workers.map((worker) => stopChild(worker, 'SIGTERM', grace + 10_000)));
  // The UI server, then the cluster's services, the frontend last (or the dev server alone).
  for (const child of [...temporal].reverse()) await stopChild(child, 'SIGTERM', 10_000);
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

  const dataDir = path.resolve(ROOT, process.env.STACK_DATA_DIR || (CLUSTER ? '.data-cluster' : '.data'));
  const pgPort = portSetting('STACK_POSTGRES_PORT', 5433);
  const temporalPort = portSetting('STACK_TEMPORAL_PORT', 7233);
  const temporalUiPort = portSetting('STACK_TEMPORAL_UI_PORT', 8233);
  const gatewayPort = portSetting('PORT', 3000);
  const metricsPort = portSetting('METRICS_PORT', 9464);
  const workerHttpPort = portSetting('WORKER_HTTP_PORT', 9465);
  const processes = CLUSTER ? 2 : 1;
  const cluster = CLUSTER ? clusterPorts(temporalPort, temporalUiPort) : undefined;
  // Open sign-up, plain-http webhooks and private URLs are for this machine only: the stack listens
  // on loopback unless HOST says otherwise.
  const gatewayHost = process.env.HOST || '127.0.0.1';
  const graceSetting = parseDuration(process.env.SHUTDOWN_GRACE ?? '10s');
  if (graceSetting === undefined) throw new Error('SHUTDOWN_GRACE must be a duration such as 10s');
  grace = graceSetting;
  backgroundNice = backgroundNiceSetting(process.env);
  const retention = namespaceRetentionMs(process.env);
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
    ...(embeddedTemporal && cluster
      ? [
          ...portsOf(cluster).map(
            (port) => [port, '127.0.0.1', `the Temporal cluster (port ${port})`] as [number, string, string],
          ),
          [cluster.ui, '127.0.0.1', 'the Temporal UI server (STACK_TEMPORAL_UI_PORT)'] as [
            number,
            string,
            string,
          ],
        ]
      : []),
    ...(embeddedTemporal && !cluster
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
    ...Array.from({ length: processes }, (_, i): [number, string, string][] => [
      [
        nthPort(metricsPort, i),
        gatewayHost,
        `gateway ${i + 1}'s metrics (METRICS_PORT${i ? ` + ${2 * i}` : ''})`,
      ],
      [
        nthPort(workerHttpPort, i),
        gatewayHost,
        `worker ${i + 1}'s health and metrics (WORKER_HTTP_PORT${i ? ` + ${2 * i}` : ''})`,
      ],
    ]).flat(),
  ];
  for (const [port, host, what] of ports) {
    if (port === 0) continue;
    const problem = await portProblem(port, host);
    if (problem) problems.push(`${what}: ${problem}`);
  }
  if (problems.length) throw new Error(`cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}`);

  const env: NodeJS.ProcessEnv = {
    ...embeddedDefaults({ host: gatewayHost, filesDir: path.join(dataDir, 'files') }),
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

  if (embeddedTemporal && cluster) {
    const adminUrl = postgres ? postgres.url('postgres') : withDatabase(env.DATABASE_URL ?? '', 'postgres');
    say(`starting the Temporal cluster, frontend on port ${cluster.frontend} (history in PostgreSQL)`);
    env.TEMPORAL_ADDRESS = await startTemporalCluster(adminUrl, cluster);
    await setRetention(env.TEMPORAL_ADDRESS, retention);
  } else if (embeddedTemporal) {
    const cli = await resolveTemporalCli();
    if (stopping) return;
    const dbFile = path.join(dataDir, 'temporal.db');
    say(`starting the Temporal dev server on port ${temporalPort} (history in ${shown(dbFile)})`);
    const server = startChild({
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
      nice: backgroundNice,
    });
    temporal.push(server);
    await reportPriority(server);
    env.TEMPORAL_ADDRESS = `127.0.0.1:${temporalPort}`;
    await waitForTemporal(env.TEMPORAL_ADDRESS, server);
    watch(server);
    await setRetention(env.TEMPORAL_ADDRESS, retention);
  }

  if (stopping) return;
  const migrated = await migrate(env.DATABASE_URL ?? '');
  say(`migrations: ${migrated.applied.length} applied, ${migrated.alreadyApplied.length} already in place`);

  if (stopping) return;
  // Started together: most of a start is loading the code, which one core does while the other waits.
  await Promise.all(
    Array.from({ length: processes }, async (_, i) => {
      const name = CLUSTER ? `worker ${i + 1}` : 'the worker';
      const workerEnv = { ...env, WORKER_HTTP_PORT: String(nthPort(workerHttpPort, i)) };
      const worker = await keep(workers, i, async () => {
        const started = startApp(name, 'apps/worker/main.ts', workerEnv, backgroundNice);
        await waitForReady(started);
        return started;
      });
      if (CLUSTER) say(`${name} ready (pid ${worker.pid})`);
    }),
  );
  if (stopping) return;
  // In the cluster, one process runs the gateways and starts again any that dies (gateways.ts).
  gateway = CLUSTER
    ? startApp('the gateways', 'apps/stack/gateways.ts', {
        ...env,
        GATEWAY_PROCESSES: String(processes),
        GATEWAY_METRICS_PORTS: Array.from({ length: processes }, (_, i) => nthPort(metricsPort, i)).join(','),
      })
    : startApp('the gateway', 'apps/gateway/main.ts', env);
  await waitForReady(gateway);
  watch(gateway);

  say('ready');
  process.stdout.write(
    [
      '',
      `  Console          http://localhost:${gatewayPort}/   (open it in a browser: sign up, chat, approve plans, keys, webhooks)`,
      `  Gateway          http://localhost:${gatewayPort}   (API reference at /docs)${CLUSTER ? `, ${processes} gateways` : ''}`,
      ...(CLUSTER ? [`  Workers          ${processes}, pids ${workers.map((w) => w.pid).join(', ')}`] : []),
      ...(process.env.TEMPORAL_ADDRESS
        ? [`  Temporal         ${process.env.TEMPORAL_ADDRESS}`]
        : cluster
          ? [
              `  Temporal         127.0.0.1:${cluster.frontend} (frontend), history :${cluster.history}, matching :${cluster.matching}, worker :${cluster.worker}`,
              `  Temporal Web UI  http://localhost:${cluster.ui}`,
            ]
          : [`  Temporal Web UI  http://localhost:${temporalUiPort}`]),
      ...(embeddedPostgres
        ? [
            `  PostgreSQL       127.0.0.1:${pgPort} (databases agent_chat${cluster && embeddedTemporal ? ', temporal, temporal_visibility' : ''})`,
          ]
        : []),
      ...Array.from(
        { length: processes },
        (_, i) =>
          `  Metrics          http://localhost:${nthPort(metricsPort, i)}/metrics (gateway${CLUSTER ? ` ${i + 1}` : ''}), http://localhost:${nthPort(workerHttpPort, i)}/metrics (worker${CLUSTER ? ` ${i + 1}` : ''})`,
      ),
      `  Data             ${shown(dataDir)}`,
      '',
      '  Credentials: sign-up is open in this mode (in the console, or with curl):',
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
