import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { SearchAttributeType } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { startChild, type Child } from '../process/child';
import { reasonOf } from '../../../core/process/reason';
import { resolveScriptTool } from './temporal-cli';

/**
 * A Temporal cluster as an operator runs it: the server's four services as separate processes on
 * PostgreSQL, configured by the files in deploy/temporal (the same ones docker-compose.yml mounts),
 * the schema installed and upgraded by Temporal's SQL tool, and the UI server. Used by
 * `npm run start:cluster` (apps/cluster) and the cluster suite.
 */
const ROOT = path.resolve(__dirname, '../../..');
// Relative to ROOT, passed as --root: both servers join --root and --config as one relative path.
export const TEMPORAL_CONFIG_DIR = 'deploy/temporal';
export const TEMPORAL_UI_CONFIG_DIR = 'deploy/temporal-ui';
/** The config file each directory holds: `<env>.yaml`, chosen by `--env`. */
const CONFIG_ENV = 'production';

/** In start order: on an empty database the services race to write the cluster's metadata, and a
 * frontend that loses dies, so the frontend starts first, alone. */
export const TEMPORAL_SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];

export type ClusterTool = 'server' | 'sql-tool' | 'ui-server';

/** The path of a cluster binary, built once by scripts/temporal-cluster-tool.sh (progress on stderr). */
export function resolveClusterTool(tool: ClusterTool, options: { find?: boolean } = {}): Promise<string> {
  return resolveScriptTool('temporal-cluster-tool.sh', [...(options.find ? ['--find'] : []), tool]);
}

/** Every port of the cluster on one machine: gRPC and membership (ringpop) per service. */
export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: Record<TemporalService, number>;
  ui: number;
}

/** Temporal's own default ports, the frontend and UI where `npm start` has them. */
export function defaultClusterPorts(frontend = 7233, ui = 8233): ClusterPorts {
  return {
    frontend,
    frontendHttp: 7243,
    history: 7234,
    matching: 7235,
    worker: 7239,
    membership: { frontend: 6933, history: 6934, matching: 6935, worker: 6939 },
    ui,
  };
}

export function portsOf(ports: ClusterPorts): number[] {
  return [
    ports.frontend,
    ports.frontendHttp,
    ports.history,
    ports.matching,
    ports.worker,
    ...Object.values(ports.membership),
  ];
}

/** The two databases Temporal keeps on the server of `adminUrl`, and the schema each gets. */
export const TEMPORAL_DATABASES = [
  { name: 'temporal', schema: 'postgresql/v12/temporal' },
  { name: 'temporal_visibility', schema: 'postgresql/v12/visibility' },
] as const;

const exec = promisify(execFile);

/**
 * Creates Temporal's databases when missing, then brings each schema to the version this server
 * release needs, as an operator does on every upgrade: `setup-schema -v 0.0` (only the version
 * table; a no-op once there) and `update-schema` with the schemas built into the SQL tool, which
 * applies the versions not yet applied. Safe to run on every start.
 */
export async function installTemporalSchemas(sqlTool: string, adminUrl: string): Promise<string[]> {
  const url = new URL(adminUrl);
  const onDatabase = async <T>(database: string, use: (client: Client) => Promise<T>): Promise<T> => {
    const target = new URL(adminUrl);
    target.pathname = `/${database}`;
    const client = new Client({ connectionString: target.toString() });
    await client.connect();
    try {
      return await use(client);
    } finally {
      await client.end();
    }
  };
  await onDatabase(decodeURIComponent(url.pathname.slice(1)) || 'postgres', async (client) => {
    for (const { name } of TEMPORAL_DATABASES) {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
    }
  });
  const version = (database: string) =>
    onDatabase(database, async (client) => {
      const { rows } = await client
        .query<{ curr_version: string }>('SELECT curr_version FROM schema_version')
        .catch(() => ({ rows: [] as { curr_version: string }[] }));
      return rows[0]?.curr_version;
    });
  const connection = [
    '--plugin',
    'postgres12_pgx',
    '--endpoint',
    url.hostname,
    '--port',
    url.port || '5432',
    '--user',
    decodeURIComponent(url.username),
  ];
  // The password goes by environment variable (SQL_PASSWORD), not on a command line others can read.
  const env = { ...process.env, SQL_PASSWORD: decodeURIComponent(url.password) };
  const done: string[] = [];
  for (const { name, schema } of TEMPORAL_DATABASES) {
    const run = async (args: string[]) => {
      try {
        await exec(sqlTool, [...connection, '--database', name, ...args], { env });
      } catch (err) {
        const output = (err as { stderr?: string }).stderr ?? '';
        throw new Error(`temporal-sql-tool ${args[0]} on ${name} failed: ${output.trim() || reasonOf(err)}`);
      }
    };
    const before = await version(name);
    await run(['setup-schema', '--version', '0.0']);
    await run(['update-schema', '--schema-name', schema]);
    const after = await version(name);
    done.push(
      `${name} ${before === after ? `at schema ${after}` : `schema ${before ?? 'none'} -> ${after ?? 'none'}`}`,
    );
  }
  return done;
}

/** What the server's config template (deploy/temporal/production.yaml) reads from the environment. */
export function temporalServerEnv(adminUrl: string, ports: ClusterPorts): NodeJS.ProcessEnv {
  const url = new URL(adminUrl);
  return {
    ...process.env,
    POSTGRES_SEEDS: url.hostname,
    DB_PORT: url.port || '5432',
    POSTGRES_USER: decodeURIComponent(url.username),
    POSTGRES_PWD: decodeURIComponent(url.password),
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    HISTORY_GRPC_PORT: String(ports.history),
    MATCHING_GRPC_PORT: String(ports.matching),
    WORKER_GRPC_PORT: String(ports.worker),
    FRONTEND_MEMBERSHIP_PORT: String(ports.membership.frontend),
    HISTORY_MEMBERSHIP_PORT: String(ports.membership.history),
    MATCHING_MEMBERSHIP_PORT: String(ports.membership.matching),
    WORKER_MEMBERSHIP_PORT: String(ports.membership.worker),
    DYNAMIC_CONFIG_FILE_PATH: path.join(ROOT, TEMPORAL_CONFIG_DIR, 'dynamicconfig.yaml'),
  };
}

export function startTemporalService(
  server: string,
  service: TemporalService,
  env: NodeJS.ProcessEnv,
  options: { echo?: boolean; nice?: number } = {},
): Child {
  return startChild({
    name: `the Temporal ${service} service`,
    command: server,
    args: [
      '--config',
      TEMPORAL_CONFIG_DIR,
      '--env',
      CONFIG_ENV,
      '--allow-no-auth',
      'start',
      '--service',
      service,
    ],
    cwd: ROOT,
    env,
    lifelineSignal: 'SIGTERM',
    echo: options.echo ?? false,
    nice: options.nice,
  });
}

export function startTemporalUi(
  uiServer: string,
  options: { frontendAddress: string; port: number; namespace: string },
): Child {
  return startChild({
    name: 'the Temporal UI server',
    command: uiServer,
    args: ['--root', ROOT, '--config', TEMPORAL_UI_CONFIG_DIR, '--env', CONFIG_ENV, 'start'],
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: options.frontendAddress,
      TEMPORAL_UI_PORT: String(options.port),
      TEMPORAL_UI_ORIGIN: `http://localhost:${options.port}`,
      TEMPORAL_NAMESPACE: options.namespace,
    },
    lifelineSignal: 'SIGTERM',
    echo: false,
  });
}

/** Resolves once the frontend at `address` answers; fails with the child's last words if it exits. */
export async function waitForFrontend(address: string, frontend: Child, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!frontend.running()) {
      throw new Error(`${frontend.name} exited before it answered on ${address}:\n${frontend.lastLines()}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) {
        throw new Error(
          `${frontend.name} did not answer on ${address} within ${timeoutMs / 1000} s: ${reasonOf(err)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

const { IndexedValueType } = temporal.api.enums.v1;
const INDEXED_TYPE: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  TEXT: IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
  INT: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** gRPC's ALREADY_EXISTS: the namespace or attribute is there from an earlier start. */
const ALREADY_EXISTS = 6;

/**
 * Registers the namespace and the search attributes the service's workflows set (the dev server
 * gets the same list as flags, apps/stack/embedded/temporal-cli.ts), then waits until the frontend sees
 * both: a new namespace reaches the frontend's cache within its refresh interval (~10 s).
 */
export async function registerNamespace(
  address: string,
  namespace: string,
  searchAttributes: readonly SearchAttributeKey<SearchAttributeType>[],
  retentionDays = 7,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService
      .registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(`${retentionDays} days`),
      })
      .catch((err: { code?: number }) => {
        if (err.code !== ALREADY_EXISTS) throw err;
      });
    const wanted = Object.fromEntries(
      searchAttributes.map((k) => [
        k.name,
        INDEXED_TYPE[k.type] ?? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        const missing = Object.keys(wanted).filter((name) => !(name in (customAttributes ?? {})));
        if (missing.length === 0) return;
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(missing.map((name) => [name, wanted[name] as number])),
        });
      } catch (err) {
        // NotFound until the namespace reaches the frontend's cache; then the attributes go in.
        if (Date.now() > deadline) {
          throw new Error(
            `could not register the namespace ${namespace} and its search attributes: ${reasonOf(err)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  } finally {
    await connection.close();
  }
}
