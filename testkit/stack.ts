import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../core/config/config';
import { createDatabase, type Database } from '../core/db/client';
import { migrate } from '../core/db/migrator';
import {
  embeddedPostgresDurable,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
} from '../apps/stack/embedded/postgres';
import { DEV_SERVER_DYNAMIC_CONFIG_FLAGS } from '../apps/stack/embedded/temporal-cli';
import { freePort } from '../core/process/ports';
import { sdkMetricsExporter } from '../core/telemetry/temporal-runtime';
import { preparedTool } from './prepared';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

/**
 * The real infrastructure every test shares: one PostgreSQL (embedded, or TEST_DATABASE_URL) with
 * a fresh database per run, and one Temporal: a dev server started through the SDK, or the one at
 * TEST_TEMPORAL_ADDRESS (the cluster suite points it at `npm run start:cluster`'s frontend).
 */
export interface TestStack {
  /** A URL of the PostgreSQL server's maintenance database, for creating more databases. */
  adminUrl: string;
  databaseUrl: string;
  /** A client of the Temporal the tests run on, in the namespace `default`. */
  temporal: { client: TemporalClient };
  temporalAddress: string;
  /** The Temporal SDK runtime's Prometheus exporter (all in-process workers' SDK metrics). */
  sdkMetricsUrl: string;
  db: Database;
  /** A validated config for this run; pass overrides for one test. */
  config(overrides?: Record<string, string>): Config;
  /** A new, empty database on the same server. */
  createDatabase(prefix: string): Promise<string>;
}

export { freePort };

let stack: Promise<TestStack> | undefined;
const teardown: (() => Promise<void>)[] = [];

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function start(options: StackOptions): Promise<TestStack> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  let postgres: EmbeddedPostgresHandle | undefined;
  if (!adminUrl) {
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-test-pg-'));
    // When run as root, PostgreSQL runs as its own system user, which must reach the folder.
    await chmod(dir, 0o755);
    postgres = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'data'),
      port: await freePort(),
      durable: embeddedPostgresDurable(),
      statementStats: options.statementStats,
    });
    adminUrl = postgres.url('postgres');
    teardown.push(async () => {
      await postgres?.stop();
      await rm(dir, { recursive: true, force: true });
    });
  }
  const admin = adminUrl;
  const createDatabase_ = async (prefix: string) => {
    const name = `${prefix}_${randomBytes(6).toString('hex')}`;
    const client = new Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE "${name}"`);
    await client.end();
    return withDatabase(admin, name);
  };
  const databaseUrl = await createDatabase_('test');
  await migrate(databaseUrl);

  const sdkMetricsUrl = await installTestRuntime();
  const { temporal, temporalAddress } = await startTemporal();

  const baseEnv: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(4).toString('hex')}`,
    APP_SECRET: randomBytes(32).toString('base64url'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    // Every suite signs its users up from this one loopback address into one database, as
    // npm start's loopback default allows; the limit's own tests set theirs.
    SIGN_UP_RATE_LIMIT_PER_HOUR: '1000',
  };
  const db = createDatabase({ url: databaseUrl, poolSize: 10 });
  teardown.unshift(() => db.close());
  return {
    adminUrl: admin,
    databaseUrl,
    temporal,
    temporalAddress,
    sdkMetricsUrl,
    db,
    config: (overrides = {}) => loadConfig({ ...baseEnv, ...overrides }),
    createDatabase: createDatabase_,
  };
}

async function startTemporal(): Promise<{ temporal: { client: TemporalClient }; temporalAddress: string }> {
  const external = process.env.TEST_TEMPORAL_ADDRESS;
  if (external) {
    const connection = await Connection.connect({ address: external });
    teardown.unshift(() => connection.close());
    return { temporal: { client: new TemporalClient({ connection }) }, temporalAddress: external };
  }
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: await preparedTool('temporal-cli.sh') },
      searchAttributes: [...SEARCH_ATTRIBUTES],
      // The Web UI, for the scripts that look at it (test/ops/web-ui-screenshots.ts).
      ...(process.env.TEST_TEMPORAL_UI_PORT ? { uiPort: Number(process.env.TEST_TEMPORAL_UI_PORT) } : {}),
      extraArgs: ['--log-level', 'error', ...DEV_SERVER_DYNAMIC_CONFIG_FLAGS],
    },
  });
  teardown.unshift(() => temporal.teardown());
  return { temporal, temporalAddress: temporal.address };
}

let runtime: Promise<string> | undefined;

/**
 * The SDK runtime of a test process, installed before anything creates one by default: the SDK's
 * own logs (bundling, state changes) would drown the report, and its metrics go to a Prometheus
 * endpoint of their own, whose URL this answers. Safe to call more than once.
 */
export function installTestRuntime(): Promise<string> {
  runtime ??= (async () => {
    const sdkMetrics = sdkMetricsExporter(await freePort());
    Runtime.install({
      logger: new DefaultLogger(process.env.TEST_TEMPORAL_LOG_LEVEL === 'info' ? 'INFO' : 'ERROR'),
      telemetryOptions: { metrics: sdkMetrics.options },
    });
    return sdkMetrics.url;
  })();
  return runtime;
}

export interface StackOptions {
  /** The embedded PostgreSQL loads pg_stat_statements (see startEmbeddedPostgres). */
  statementStats?: boolean;
}

/** The one stack of this process, started by the first call (whose options it takes). */
export function testStack(options: StackOptions = {}): Promise<TestStack> {
  stack ??= start(options);
  return stack;
}

export async function stopTestStack(): Promise<void> {
  if (!stack) return;
  await stack.catch(() => undefined);
  for (const step of teardown) await step().catch((err: Error) => console.error(`teardown: ${err.message}`));
}
