/**
 * `npm run bench`: the service's hot paths against the bare work they cannot avoid, measured in the
 * same run on the same servers. `npm run bench -- --rows=sustained,cpu` (or BENCH_ROWS) measures
 * some rows only. See bench/README.md for every row, its baseline and how to read the table.
 */
import { access, mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { listenerOf } from '../apps/stack/process/procfs';
import { backgroundNiceSetting, lowerAutogroup } from '../apps/stack/process/priority';
import { testStack, stopTestStack, type TestStack } from '../testkit/stack';
import { admissionRows } from './admission';
import { bigDbRows } from './bigdb';
import { startBare, type BareStack } from './bare';
import { engineOf, startClusterEngine } from './engine';
import { openBench, startServiceProcesses, type Bench } from './context';
import { consoleRow } from './console';
import { cropRow } from './crop';
import { bareLoad, serviceLoad, type LoadOptions, type LoadWindow } from './load';
import { mcpRows } from './mcp';
import { failedRow, printTable, type Row } from './report';
import { ROW_KEYS, selectRows, type RowKey } from './selection';
import { snapshotRows } from './snapshot';
import { streamsRows } from './streams';
import { endToEndRow, historyRows } from './turns';

const N = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
/** How many times each row is measured: its figure is the median of these rounds, with their spread. */
const ROUNDS = N('BENCH_ROUNDS', 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error('bench: BENCH_ROUNDS must be a whole number ≥ 1');
const SAMPLES = {
  rounds: ROUNDS,
  seq: N('BENCH_SEQ', 200),
  conc: N('BENCH_CONC', 400),
  polls: N('BENCH_POLLS', 1000),
  crops: N('BENCH_CROPS', 40),
  turns: N('BENCH_TURNS', 40),
  streams: N('BENCH_STREAMS', 1000),
};
const LOAD: LoadOptions = {
  rounds: ROUNDS,
  chats: N('BENCH_SUSTAINED_CHATS', 32),
  seconds: N('BENCH_SUSTAINED_SECONDS', 45),
  warmupSeconds: N('BENCH_WARMUP_SECONDS', 10),
  pollMs: N('BENCH_POLL_MS', 20),
  idleSends: N('BENCH_IDLE_SENDS', 30),
  waitingRuns: N('BENCH_WAITING_RUNS', 1000),
};

/** What the PostgreSQL server says of its commit durability: the rows that write depend on it. */
async function postgresDurability(stack: TestStack): Promise<Record<string, string>> {
  const show = async (setting: string) =>
    ((await stack.db.pool.query<Record<string, string>>(`SHOW ${setting}`)).rows[0] ?? {})[setting] ?? '?';
  return { synchronous_commit: await show('synchronous_commit'), fsync: await show('fsync') };
}

interface Results {
  rows: Row[];
  tables: { title: string; markdown: string }[];
  data: Record<string, unknown>;
}

/**
 * The rows in the order that keeps each fair: the short sequential ones first on a fresh server,
 * the in-process gateway and worker stopped before anything counts CPU, the service's load beside
 * no bare process, the bare load on either side of each of the service's windows (load.ts; after
 * the first, beside the service's processes, idle), admission last (it leaves its workflows open).
 * Every row is measured in SAMPLES.rounds rounds.
 */
async function run(bench: Bench, results: Results): Promise<void> {
  const { selection } = bench;
  const { rounds } = SAMPLES;
  const startBareProcess = () => startBare(bench.stack.temporalAddress, bench.backgroundNice);
  const rows = (keys: RowKey[], measure: () => Promise<Row | Row[]>) =>
    measured(bench, results, keys, measure);
  await rows(['crop'], () => cropRow(bench, SAMPLES.crops, rounds));
  await rows(['snapshot'], () => snapshotRows(bench, SAMPLES.polls, rounds));
  await rows(['console'], () => consoleRow(bench, rounds));
  await bench.stopInProcess();

  let bareFirst: LoadWindow | undefined;
  if (selection.has('history', 'e2e', 'sustained', 'cpu')) {
    const bare: BareStack = await startBareProcess();
    try {
      if (selection.has('history', 'e2e')) {
        const service = await startServiceProcesses(bench);
        try {
          await rows(['history'], () => historyRows(bench, service, bare, rounds));
          await rows(['e2e'], () => endToEndRow(bench, service, bare, SAMPLES.turns, rounds));
        } finally {
          await service.stop();
        }
      }
      await rows(['sustained', 'cpu'], async () => {
        bareFirst = await bareLoad(bare, LOAD);
        return [];
      });
    } finally {
      await bare.stop();
    }
  }
  await rows(['sustained', 'cpu', 'send', 'memory'], async () => {
    const service = await startServiceProcesses(bench);
    try {
      // The bare load again after each of the service's windows, in a process of its own while the
      // service's sit idle (bracketed, load.ts).
      const bareNext = async () => {
        const bare = await startBareProcess();
        try {
          return await bareLoad(bare, LOAD);
        } finally {
          await bare.stop();
        }
      };
      const load = await serviceLoad(bench, service, LOAD, bareFirst && { first: bareFirst, next: bareNext });
      results.tables.push(...load.tables);
      Object.assign(results.data, load.data);
      return load.rows;
    } finally {
      await service.stop();
    }
  });
  await rows(['mcp'], () => mcpRows(bench, SAMPLES));
  await rows(['streams'], () => streamsRows(bench, SAMPLES.streams, rounds));
  await rows(['bigdb'], async () => {
    const big = await bigDbRows(bench);
    results.tables.push(...big.tables);
    Object.assign(results.data, big.data);
    return big.rows;
  });
  await rows(['admission'], () => admissionRows(bench, SAMPLES));
}

/**
 * Measures the picked ones of `keys` with `measure`. A failure (a deadline missed on an overloaded
 * machine, a process that died) fails those rows, with why, and the run goes on to the next rows:
 * a long run keeps what it measured.
 */
async function measured(
  bench: Bench,
  results: Results,
  keys: RowKey[],
  measure: () => Promise<Row | Row[]>,
): Promise<void> {
  const picked = keys.filter((k) => bench.selection.has(k));
  if (!picked.length) return;
  try {
    results.rows.push(...[await measure()].flat());
  } catch (err) {
    console.error(`bench: ${picked.join(', ')} failed:`, err);
    for (const key of picked)
      if (!results.rows.some((r) => r.key === key)) results.rows.push(failedRow(key, err));
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const selection = selectRows(process.argv.slice(2), process.env);
  // DATABASE_URL → the stack's PostgreSQL server (a fresh database is created on it).
  if (process.env.DATABASE_URL && !process.env.TEST_DATABASE_URL)
    process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
  const engine = engineOf(process.argv.slice(2), process.env);
  // The background tier runs below the front door, as `npm start` runs it (STACK_BACKGROUND_NICE=0: not).
  const backgroundNice = backgroundNiceSetting(process.env);
  const keys = ROW_KEYS.filter((k) => selection.keys.has(k));
  const load = os.loadavg().map((l) => l.toFixed(1));
  console.log(`bench: rows ${keys.join(', ')}; ${os.cpus().length} cores, load average ${load.join(' ')}`);
  const external = Boolean(process.env.TEST_DATABASE_URL);
  let stopEngine: (() => Promise<void>) | undefined;
  if (engine === 'cluster') {
    console.log('bench: starting PostgreSQL + a Temporal cluster (four services on PostgreSQL)…');
    stopEngine = await startClusterEngine(backgroundNice);
  } else {
    console.log('bench: starting stack (PostgreSQL + Temporal dev server)…');
  }
  // pg_stat_statements, for the statements per turn beside the CPU table (an embedded server only).
  const stack = await testStack({ statementStats: true });
  if (engine === 'dev' && !process.env.TEST_TEMPORAL_ADDRESS) await lowerDevServer(stack, backgroundNice);
  const postgres = await postgresDurability(stack);
  const durability = `Temporal: ${engine === 'cluster' ? 'cluster on PostgreSQL' : 'dev server (SQLite)'}; PostgreSQL ${external ? '(external)' : '(embedded)'}: synchronous_commit=${postgres.synchronous_commit}, fsync=${postgres.fsync}; Temporal and workers at nice ${backgroundNice}`;
  console.log(`bench: ${durability}`);

  const bench = await openBench(stack, selection, backgroundNice);
  const results: Results = { rows: [], tables: [], data: {} };
  try {
    await run(bench, results);
  } finally {
    await bench.close();
  }

  const rows = [...results.rows].sort((a, b) => ROW_KEYS.indexOf(a.key) - ROW_KEYS.indexOf(b.key));
  const table = printTable(rows);
  console.log(`\n${durability}\n\n${table}`);
  for (const t of results.tables) console.log(`\n${t.title}:\n${t.markdown}`);

  // A run of some rows, or without durable commits, gets a file of its own beside the day's full run.
  const durable = postgres.fsync === 'on' && postgres.synchronous_commit !== 'off';
  const name = [
    new Date().toISOString().slice(0, 10),
    ...(selection.all ? [] : [keys.join('+')]),
    ...(engine === 'cluster' ? ['cluster'] : []),
    ...(durable ? [] : ['not-durable']),
  ].join('-');
  const out = {
    date: new Date().toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      memoryBytes: os.totalmem(),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadAverageAtStart: load,
      loadAverageAtEnd: os.loadavg().map((l) => l.toFixed(1)),
    },
    rowsMeasured: keys,
    engine,
    postgres,
    backgroundNice,
    samples: { ...SAMPLES, load: LOAD },
    rows,
    tables: results.tables,
    data: results.data,
    table,
  };
  const dir = path.join(__dirname, 'results');
  await mkdir(dir, { recursive: true });
  const file = await freshFile(dir, name);
  await writeFile(path.join(dir, file), JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote bench/results/${file} in ${out.durationSeconds.toFixed(0)} s`);
  await stopTestStack();
  await stopEngine?.();
}

/**
 * The dev server the tests' stack started (through the SDK, which says nothing of its pid), found
 * by the port it listens on and lowered to `nice` like the stack's (apps/stack/process/priority.ts):
 * each thread it has (a thread it starts later inherits its starter's nice), and its session's
 * weight when it leads one. Unlike `npm start`'s children it may share the bench's session, where
 * the threads' nice is what counts.
 */
async function lowerDevServer(stack: TestStack, nice: number): Promise<void> {
  const port = Number(stack.temporalAddress.split(':').pop());
  const server = await listenerOf(port);
  if (!server) throw new Error(`bench: no process listens on the dev server's port ${port}`);
  for (const tid of await readdir(`/proc/${server.pid}/task`)) {
    try {
      os.setPriority(Number(tid), Math.max(nice, os.getPriority(Number(tid))));
    } catch {
      // ESRCH: the thread ended meanwhile.
    }
  }
  await lowerAutogroup(server.pid, nice);
}

/** `<name>.json`, or `<name>-2.json`, `-3`… when a run of the same day and rows wrote it already. */
async function freshFile(dir: string, name: string): Promise<string> {
  for (let n = 1; ; n++) {
    const file = n === 1 ? `${name}.json` : `${name}-${n}.json`;
    try {
      await access(path.join(dir, file));
    } catch {
      return file;
    }
  }
}

main().then(
  () => process.exit(0),
  async (err) => {
    console.error(err);
    await stopTestStack().catch(() => undefined);
    process.exit(1);
  },
);
