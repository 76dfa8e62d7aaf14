import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

const SCRIPTS = path.resolve(__dirname, '../../../scripts');

/**
 * The path printed by one of the tool scripts of scripts/, which finds a tool or builds it once;
 * the build's progress (stderr) is shown as it happens.
 */
export async function resolveScriptTool(script: string, args: readonly string[] = []): Promise<string> {
  const child = promisify(execFile)('bash', [path.join(SCRIPTS, script), ...args], {
    maxBuffer: 1024 * 1024,
  });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return stdout.trim().split('\n').pop() ?? '';
}

/** The one way every part of the project finds (or builds) the Temporal CLI: scripts/temporal-cli.sh. */
export function resolveTemporalCli(): Promise<string> {
  return resolveScriptTool('temporal-cli.sh');
}

export function searchAttributeFlags(keys: readonly SearchAttributeKey<SearchAttributeType>[]): string[] {
  const typeName: Record<string, string> = {
    KEYWORD: 'Keyword',
    TEXT: 'Text',
    INT: 'Int',
    DOUBLE: 'Double',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  };
  return keys.flatMap((k) => ['--search-attribute', `${k.name}=${typeName[k.type] ?? 'Keyword'}`]);
}

/**
 * Server settings every dev server we start shares.
 * - The dev server runs one history shard, whose transfer-queue processor (which hands each new
 *   workflow or activity task to matching) polls at most 20 times a second by default: past a
 *   short burst every task hand-off waits for it. A cluster spreads that limit over
 *   hundreds of shards; one shard needs it raised.
 * - Eager activity execution hands an activity to the worker that scheduled it in the reply to its
 *   workflow task, skipping a trip through the task queue; eager workflow start hands a workflow's
 *   first task to the worker that started it (a webhook delivery) in the start's answer.
 * - The search attributes are read from the server's cache, as a cluster's are. The CLI makes
 *   every read of them go to the database (so that one created at run time shows at once): that
 *   costs a turn, whose start and status upserts each read them, a few cluster-metadata and
 *   namespace reads of SQLite each (the server's `persistence_requests` count them). Every
 *   attribute ours uses is created by a flag before the server answers anything, so the cache
 *   never misses one.
 */
export const DEV_SERVER_DYNAMIC_CONFIG_FLAGS = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=2000',
  '--dynamic-config-value',
  'history.timerProcessorMaxPollRPS=2000',
  '--dynamic-config-value',
  'history.visibilityProcessorMaxPollRPS=2000',
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=true',
  '--dynamic-config-value',
  'system.enableEagerWorkflowStart=true',
  '--dynamic-config-value',
  'system.forceSearchAttributesCacheRefreshOnRead=false',
] as const;

/**
 * `temporal server start-dev` with a persistent SQLite file, on loopback, with our settings.
 *
 * Durability: the dev server answers a start or signal only after its SQLite transaction has
 * committed, and `synchronous=FULL` makes that commit durable: the pragma is passed, so the
 * promise does not rest on a default of the CLI's build. `journal_mode=WAL` keeps that promise
 * with one fsync of the write-ahead log per commit, where the default rollback journal fsyncs the
 * journal and the database file several times per commit. After a crash SQLite replays the log
 * when the file is next opened.
 */
export function devServerArgs(options: {
  port: number;
  uiPort: number;
  dbFile: string;
  searchAttributes: readonly SearchAttributeKey<SearchAttributeType>[];
}): string[] {
  return [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--db-filename',
    options.dbFile,
    '--sqlite-pragma',
    'synchronous=FULL',
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--log-level',
    'error',
    ...searchAttributeFlags(options.searchAttributes),
    ...DEV_SERVER_DYNAMIC_CONFIG_FLAGS,
  ];
}
