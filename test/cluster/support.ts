/**
 * The cluster suite's one tree: `npm run start:cluster` on free ports and a temporary data folder,
 * started once for the whole suite (hooks.ts). The contract suites reused from the main suite run
 * their in-process gateways and workers on its Temporal cluster and its PostgreSQL (testkit's
 * TEST_TEMPORAL_ADDRESS and TEST_DATABASE_URL); the tests of test/cluster drive its two gateways
 * through its one address and kill its processes.
 */
import { Pool } from 'pg';
import { portProblem } from '../../apps/stack/process/ports';
import { freePort } from '../../testkit/stack';
import {
  removeSettings,
  stackSettings,
  startReady,
  type Stack,
  type StackSettings,
} from '../lifecycle/support';

export interface Cluster {
  stack: Stack;
  settings: StackSettings;
  /** The one address of the two gateways. */
  url: string;
  temporalAddress: string;
  uiUrl: string;
  /** The maintenance database of the tree's PostgreSQL. */
  adminUrl: string;
  /** The service's own database, as the tree's gateways and workers use it. */
  pool: Pool;
  /** Each gateway's operator port (metrics), in order. */
  metricsUrls: string[];
  /** Seconds from the command to `[cluster] ready`. */
  startSeconds: number;
  /** The pid of a process of the tree now, as its latest line says. */
  pidOf(process: ClusterProcess): number;
  stop(): Promise<void>;
}

export type ClusterProcess = 'gateway 1' | 'gateway 2' | 'worker 1' | 'worker 2' | 'history' | 'matching';

/** A free port whose neighbour two above is free too (the second gateway's or worker's). */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65_000 && !(await portProblem(port + 2, '127.0.0.1'))) return port;
  }
}

const PID_LINES: Record<ClusterProcess, RegExp> = {
  'gateway 1': /\[gateways\] gateway 1 ready \(pid (\d+)/g,
  'gateway 2': /\[gateways\] gateway 2 ready \(pid (\d+)/g,
  'worker 1': /\[cluster\] worker 1 (?:ready|running again) \(pid (\d+)\)/g,
  'worker 2': /\[cluster\] worker 2 (?:ready|running again) \(pid (\d+)\)/g,
  history:
    /\[cluster\] (?:Temporal history service started|the Temporal history service running again) \(pid (\d+)\)/g,
  matching:
    /\[cluster\] (?:Temporal matching service started|the Temporal matching service running again) \(pid (\d+)\)/g,
};

/**
 * Settings for `npm run start:cluster` (lifecycle's stackSettings, plus free ports for the
 * cluster's second gateway and worker and for Temporal's services); the first gateway's and
 * worker's operator ports are `metrics` and `workerHttp`, the second's two above.
 */
export async function clusterSettings(
  env: Record<string, string | undefined> = {},
): Promise<{ settings: StackSettings; metrics: number }> {
  const metrics = await freePortPair();
  const workerHttp = await freePortPair();
  const extra: Record<string, string> = {
    METRICS_PORT: String(metrics),
    WORKER_HTTP_PORT: String(workerHttp),
  };
  for (const name of [
    'FRONTEND_HTTP_PORT',
    'HISTORY_GRPC_PORT',
    'MATCHING_GRPC_PORT',
    'WORKER_GRPC_PORT',
    'FRONTEND_MEMBERSHIP_PORT',
    'HISTORY_MEMBERSHIP_PORT',
    'MATCHING_MEMBERSHIP_PORT',
    'WORKER_MEMBERSHIP_PORT',
  ]) {
    extra[name] = String(await freePort());
  }
  return { settings: await stackSettings({ ...extra, ...env }), metrics };
}

export async function startCluster(): Promise<Cluster> {
  const { settings, metrics } = await clusterSettings({
    // Commits need not survive a power cut here: no test cuts the power of PostgreSQL.
    EMBEDDED_POSTGRES_DURABLE: 'false',
    PLAN_APPROVAL_TIMEOUT: '10m',
  });
  const started = Date.now();
  const stack = await startReady(settings, 'start:cluster', 600_000);
  const startSeconds = (Date.now() - started) / 1000;
  const adminUrl = `postgresql://postgres:postgres@127.0.0.1:${settings.ports.postgres}/postgres`;
  const pool = new Pool({
    connectionString: `postgresql://postgres:postgres@127.0.0.1:${settings.ports.postgres}/agent_chat`,
    max: 4,
  });
  pool.on('error', () => undefined);
  return {
    stack,
    settings,
    url: settings.url,
    temporalAddress: `127.0.0.1:${settings.ports.temporal}`,
    uiUrl: `http://127.0.0.1:${settings.ports.temporalUi}`,
    adminUrl,
    pool,
    metricsUrls: [metrics, metrics + 2].map((port) => `http://127.0.0.1:${port}/metrics`),
    startSeconds,
    pidOf(process) {
      const matches = [...stack.output().matchAll(PID_LINES[process])];
      const pid = Number(matches.at(-1)?.[1]);
      if (!pid) throw new Error(`no pid of ${process} in the output:\n${stack.output().slice(-3000)}`);
      return pid;
    },
    async stop() {
      await pool.end().catch(() => undefined);
      if (stack.running()) {
        process.kill(stack.pid, 'SIGTERM');
        await stack.exited;
      }
      await removeSettings(settings);
    },
  };
}
