/**
 * `npm run bench:soak`: the service under a steady mixed load for BENCH_SOAK_MINUTES (30), with the
 * retention an operator can shorten shortened to minutes, sampling every minute each table's size
 * (heap, indexes, rows) and the gateway's and worker's resident memory and live heap. Its verdict:
 * whether what retention bounds within the run stays flat once retention has caught up, and
 * whether both processes' memory stays flat once warm (bench/README.md, "Soak").
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Pool } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { backgroundNiceSetting } from '../apps/stack/process/priority';
import { testStack, stopTestStack } from '../testkit/stack';
import { isTerminal, type SentTurn, type ServiceClient } from './client';
import { openBench, startServiceProcesses } from './context';
import { lowerDevServer } from './engine';
import { runEntry } from './entry';
import { freshFile, machineOf, markdownTable } from './report';
import { selectRows } from './selection';

const N = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const MINUTES = N('BENCH_SOAK_MINUTES', 30);
const SAMPLE_SECONDS = N('BENCH_SOAK_SAMPLE_SECONDS', 60);
const LANES = N('BENCH_SOAK_LANES', 8);
const POLL_MS = N('BENCH_SOAK_POLL_MS', 100);
/** Turns a lane sends into one chat before it opens the next. */
const TURNS_PER_CHAT = 10;

/**
 * The retention settings shortened to what the run can see caught up: the shortest each setting
 * takes. The rest (deliveries at least 1d, idempotency keys 24 hours, fixed) outlast any soak: their
 * tables grow through the run, and the verdict reports their growth per turn instead.
 */
const RETENTION = {
  RUN_EVENTS_RETENTION: '1m',
  WEBHOOK_ATTEMPT_CONTENT_RETENTION: '1m',
  WEBHOOK_DELIVERIES_RETENTION: '1d',
};
/** The tables whose every row the shortened settings bound within the run. */
const BOUNDED_IN_RUN = ['RunEvent'];

/** Flat: the least-squares growth over the last third of the run within these. */
const FLAT = {
  table: { share: 0.05, bytes: 1024 * 1024 },
  rss: { share: 0.05, bytes: 16 * 2 ** 20 },
  heap: { share: 0.05, bytes: 8 * 2 ** 20 },
};

interface TableSample {
  rows: number;
  totalBytes: number;
  heapBytes: number;
  indexBytes: number;
  deadRows: number;
}

interface Sample {
  minute: number;
  turns: number;
  errors: number;
  loadAverage: number;
  tables: Record<string, TableSample>;
  memory: Record<'gateway' | 'worker', { rssBytes: number; heapBytes: number }>;
  /** bytes of the files in the service's local storage (uploads, tool outputs) */
  storageBytes: number;
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile())
      // A file the service renamed or deleted since the listing (its upload's temporary one) counts nothing.
      total += (await stat(path.join(entry.parentPath, entry.name)).catch(() => undefined))?.size ?? 0;
  return total;
}

async function tableSizes(pool: Pool): Promise<Record<string, TableSample>> {
  const { rows } = await pool.query<{
    relname: string;
    total: string;
    heap: string;
    idx: string;
    dead: string;
  }>(
    `SELECT relname, pg_total_relation_size(relid) AS total, pg_relation_size(relid) AS heap,
            pg_indexes_size(relid) AS idx, n_dead_tup AS dead
       FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname <> '_prisma_migrations'
      ORDER BY relname`,
  );
  const out: Record<string, TableSample> = {};
  for (const r of rows) {
    const counted = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${r.relname}"`);
    out[r.relname] = {
      rows: Number(counted.rows[0]?.n),
      totalBytes: Number(r.total),
      heapBytes: Number(r.heap),
      indexBytes: Number(r.idx),
      deadRows: Number(r.dead),
    };
  }
  return out;
}

/** A loopback receiver answering every delivery 204, counting them. */
async function receiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * One lane's turns, one after the other: every tenth a plan-mode crop approved, two in ten a crop
 * (a tool call), the rest plain; each sent with an Idempotency-Key and polled to its end, a new chat
 * every TURNS_PER_CHAT turns.
 */
function lane(client: ServiceClient, imageUrl: string, stats: { turns: number; errors: number }) {
  let chatId: string | undefined;
  let n = 0;
  const send = (body: object): Promise<SentTurn> =>
    client.send(chatId ? { ...body, chatId } : body, { 'idempotency-key': randomUUID() });
  return async () => {
    if (n % TURNS_PER_CHAT === 0) chatId = undefined;
    const kind = n % 10;
    n++;
    const crop = { text: 'crop this to the left half', image_urls: [imageUrl] };
    try {
      const turn = await send(
        kind === 0 ? { ...crop, planMode: true } : kind <= 2 ? crop : { text: 'hello soak' },
      );
      chatId = turn.chatId;
      if (kind === 0) await client.approvePlan(turn, POLL_MS);
      const { snapshot } = await client.pollUntil(turn, isTerminal, POLL_MS);
      if (snapshot.status !== 'COMPLETE') throw new Error(`run ${turn.runId} ended ${snapshot.status}`);
      stats.turns++;
    } catch (err) {
      stats.errors++;
      if (stats.errors <= 5) console.error('soak: turn failed:', (err as Error).message);
    }
  };
}

/** Least-squares slope of `ys` over `xs`, times the span of `xs`: the growth a line through them shows. */
function fittedGrowth(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    den += ((xs[i] as number) - mx) ** 2;
  }
  return den ? (num / den) * ((xs[n - 1] as number) - (xs[0] as number)) : 0;
}

/** The growth over the last third of the samples, and whether it is within `bound`. */
function lastThird(samples: Sample[], of: (s: Sample) => number, bound: { share: number; bytes: number }) {
  const tail = samples.slice(Math.floor((samples.length * 2) / 3));
  const growth = fittedGrowth(
    tail.map((s) => s.minute),
    tail.map(of),
  );
  const base = of(tail[0] as Sample);
  const limit = Math.max(bound.bytes, base * bound.share);
  return {
    fromMinute: tail[0]?.minute,
    atStart: base,
    atEnd: of(tail[tail.length - 1] as Sample),
    growth: Math.round(growth),
    limit: Math.round(limit),
    flat: growth <= limit,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = os.loadavg().map((l) => l.toFixed(1));
  console.log(
    `soak: ${MINUTES} min, ${LANES} lanes; ${os.cpus().length} cores, load average ${loadAtStart.join(' ')}`,
  );
  const backgroundNice = backgroundNiceSetting(process.env);
  const stack = await testStack();
  if (!process.env.TEST_TEMPORAL_ADDRESS) await lowerDevServer(stack, backgroundNice);
  // The memory row's setup: the bench's settings, no other row's processes.
  const bench = await openBench(stack, selectRows(['--rows=memory'], {}), backgroundNice);
  Object.assign(bench.env, RETENTION);
  const hook = await receiver();
  const service = await startServiceProcesses(bench);
  const samples: Sample[] = [];
  const stats = { turns: 0, errors: 0 };
  try {
    const client = service.client(bench.user);
    await client.addWebhook(hook.url, ['agent.completed', 'agent.failed']);
    let running = true;
    const lanes = Array.from({ length: LANES }, async () => {
      const turn = lane(client, bench.image.url, stats);
      while (running) await turn();
    });
    const t0 = Date.now();
    const sample = async () => {
      const [gateway, worker] = [await service.gateway.memoryBytes(), await service.worker.memoryBytes()];
      const s: Sample = {
        minute: (Date.now() - t0) / 60_000,
        turns: stats.turns,
        errors: stats.errors,
        loadAverage: os.loadavg()[0] as number,
        tables: await tableSizes(stack.db.pool),
        memory: {
          gateway: { rssBytes: gateway.rss, heapBytes: gateway.heapUsed },
          worker: { rssBytes: worker.rss, heapBytes: worker.heapUsed },
        },
        storageBytes: await directoryBytes(bench.env.STORAGE_LOCAL_DIR as string),
      };
      samples.push(s);
      const mib = (b: number) => (b / 2 ** 20).toFixed(0);
      console.log(
        `soak: ${s.minute.toFixed(1)} min, ${s.turns} turns (${s.errors} failed), load ${s.loadAverage.toFixed(1)}; ` +
          `gateway ${mib(gateway.rss)}/${mib(gateway.heapUsed)} MiB, worker ${mib(worker.rss)}/${mib(worker.heapUsed)} MiB (resident/heap); ` +
          `RunEvent ${s.tables.RunEvent?.rows} rows ${mib(s.tables.RunEvent?.totalBytes ?? 0)} MiB`,
      );
    };
    await sample();
    for (let next = 1; next * SAMPLE_SECONDS <= MINUTES * 60; next++) {
      await sleep(Math.max(0, t0 + next * SAMPLE_SECONDS * 1000 - Date.now()));
      await sample();
    }
    running = false;
    await Promise.all(lanes);
  } finally {
    await service.stop();
    hook.close();
    await bench.close();
  }

  const last = samples[samples.length - 1] as Sample;
  const tables = Object.fromEntries(
    Object.keys(last.tables).map((name) => {
      const of = (s: Sample) => s.tables[name]?.totalBytes ?? 0;
      const rows = lastThird(samples, (s) => s.tables[name]?.rows ?? 0, { share: 0, bytes: 0 });
      const size = lastThird(samples, of, FLAT.table);
      const turns = lastThird(samples, (s) => s.turns, { share: 0, bytes: 0 });
      return [
        name,
        {
          boundedInRun: BOUNDED_IN_RUN.includes(name),
          size,
          rowsGrowth: rows.growth,
          bytesPerTurnInLastThird: turns.growth ? Math.round(size.growth / turns.growth) : 0,
        },
      ];
    }),
  );
  const memory = Object.fromEntries(
    (['gateway', 'worker'] as const).map((p) => [
      p,
      {
        rss: lastThird(samples, (s) => s.memory[p].rssBytes, FLAT.rss),
        heap: lastThird(samples, (s) => s.memory[p].heapBytes, FLAT.heap),
      },
    ]),
  );
  const verdict = {
    sizesFlat: BOUNDED_IN_RUN.every((t) => tables[t]?.size.flat),
    memoryFlat: Object.values(memory).every((m) => m.rss.flat && m.heap.flat),
    definition:
      'growth = least-squares slope over the samples of the last third of the run × its span; flat when ≤ ' +
      `max(${FLAT.table.share * 100}% of the value at its start, 1 MiB) for a table's total size (the tables retention bounds within the run: ${BOUNDED_IN_RUN.join(', ')}), ` +
      `max(${FLAT.rss.share * 100}%, 16 MiB) for resident memory and max(${FLAT.heap.share * 100}%, 8 MiB) for the live heap after a full collection`,
  };
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  console.log(
    `\n${markdownTable(
      [
        'table',
        'rows',
        'total MiB',
        'heap MiB',
        'indexes MiB',
        'last-third growth MiB',
        'bytes per turn',
        'flat',
      ],
      Object.entries(tables).map(([name, t]) => {
        const s = last.tables[name] as TableSample;
        return [
          name,
          String(s.rows),
          mib(s.totalBytes),
          mib(s.heapBytes),
          mib(s.indexBytes),
          mib(t.size.growth),
          String(t.bytesPerTurnInLastThird),
          t.boundedInRun ? String(t.size.flat) : '-',
        ];
      }),
    )}`,
  );
  for (const [p, m] of Object.entries(memory))
    console.log(
      `${p}: resident ${mib(m.rss.atStart)} → ${mib(m.rss.atEnd)} MiB (fitted ${mib(m.rss.growth)}, flat ${m.rss.flat}); ` +
        `heap ${mib(m.heap.atStart)} → ${mib(m.heap.atEnd)} MiB (fitted ${mib(m.heap.growth)}, flat ${m.heap.flat})`,
    );
  console.log(`verdict: sizes flat ${verdict.sizesFlat}, memory flat ${verdict.memoryFlat}`);

  const out = {
    date: new Date().toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    machine: machineOf(loadAtStart),
    settings: {
      minutes: MINUTES,
      sampleSeconds: SAMPLE_SECONDS,
      lanes: LANES,
      pollMs: POLL_MS,
      turnsPerChat: TURNS_PER_CHAT,
      retention: RETENTION,
      backgroundNice,
    },
    turns: stats.turns,
    failedTurns: stats.errors,
    webhookDeliveriesReceived: hook.received(),
    verdict,
    tables,
    memory,
    samples,
  };
  const dir = path.join(__dirname, 'results');
  await mkdir(dir, { recursive: true });
  const file = await freshFile(dir, `${new Date().toISOString().slice(0, 10)}-soak`);
  await writeFile(path.join(dir, file), JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote bench/results/${file} in ${out.durationSeconds.toFixed(0)} s`);
  await stopTestStack();
}

runEntry(main);
