/**
 * The rows under steady load: sustained turns per second and CPU per turn (each against bare
 * one-activity workflows at the same concurrency on the same server), sequential sends while the
 * turns execute (against idle sends), and the memory of the gateway and worker processes.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestStack } from '../testkit/stack';
import type { BareStack } from './bare';
import { bareAdmission } from './bare-admission';
import { isTerminal, type ServiceClient } from './client';
import type { Bench, ServiceProcesses } from './context';
import { cpuBetween, sampleCpu, stackProcesses, type CpuWindow } from './cpu';
import { closedLoop, measure, recorder, type Figures } from './measure';
import { fmt, latencyRow, markdownTable, type Row } from './report';
import { statementsTable, statementWindow, type Statement, type StatementWindow } from './statements';

export interface LoadOptions {
  /** clients, each with a chat of its own, sending a turn and polling it to its end, then the next */
  chats: number;
  /** the measured window of each load */
  seconds: number;
  /** load before the window opens, so it measures the steady state */
  warmupSeconds: number;
  /** how often a client polls its run's snapshot */
  pollMs: number;
  idleSends: number;
  waitingRuns: number;
}

const MIN_THROUGHPUT_RATIO = 0.5;
const MAX_CPU_RATIO = 1.5;
const MAX_BUSY_SEND_RATIO = 2;

/** What a load did in its window: the operations that ended in it, and the CPU the stack spent. */
export interface LoadWindow {
  figures: Figures;
  cpu: CpuWindow;
  /** the database's statements in the window, when counted */
  statements?: Statement[];
}

/** Completed operations in a window (failures are not completions). */
const completed = (w: LoadWindow) => w.figures.n - w.figures.errors;
const cpuPerOp = (w: LoadWindow, group?: string) =>
  (group === undefined ? w.cpu.stack : (w.cpu.groups[group] ?? 0)) / completed(w);

/** Lets `load` warm up, then opens its window and reads the CPU of `groups` at both ends of it. */
async function measureWindow(
  load: { mark(): unknown; stop(): Promise<Figures> },
  groups: Record<string, number>,
  options: LoadOptions,
  statements?: StatementWindow,
): Promise<LoadWindow> {
  await sleep(options.warmupSeconds * 1000);
  await load.mark();
  await statements?.reset();
  const from = await sampleCpu(groups);
  await sleep(options.seconds * 1000);
  const to = await sampleCpu(groups);
  const counted = await statements?.read();
  return {
    figures: await load.stop(),
    cpu: cpuBetween(from, to),
    ...(counted ? { statements: counted } : {}),
  };
}

/**
 * The bare baseline as one window from the two measured on either side of the service's round 1.
 * The test stack's Temporal server keeps every execution in an in-memory SQLite database, and each
 * workflow costs it more CPU as that fills (a bare one-activity workflow: about 9 ms in the first
 * thousands, 13 to 17 ms some ten thousand later): a baseline measured only before the service would
 * count that growth against the service. Bracketed, it weighs on both alike.
 */
function bracketed(before: LoadWindow, after: LoadWindow): LoadWindow {
  const seconds = before.cpu.seconds + after.cpu.seconds;
  const groups: Record<string, number> = {};
  for (const w of [before, after])
    for (const [name, ms] of Object.entries(w.cpu.groups)) groups[name] = (groups[name] ?? 0) + ms;
  const f = [before.figures, after.figures] as const;
  return {
    figures: {
      n: f[0].n + f[1].n,
      concurrency: f[0].concurrency,
      // Not a quantile of the two together: the mean of the two windows' medians, shown for scale.
      p50: (f[0].p50 + f[1].p50) / 2,
      p99: Math.max(f[0].p99, f[1].p99),
      throughput: (f[0].throughput * before.cpu.seconds + f[1].throughput * after.cpu.seconds) / seconds,
      errors: f[0].errors + f[1].errors,
    },
    cpu: {
      seconds,
      groups,
      stack: before.cpu.stack + after.cpu.stack,
      bench: before.cpu.bench + after.cpu.bench,
      elsewhere: before.cpu.elsewhere + after.cpu.elsewhere,
    },
  };
}

/**
 * Bare workflows of one no-op activity, started and awaited by `chats` clients in the bare
 * process; the stack is the Temporal server, PostgreSQL (idle: nothing bare uses it) and the bare
 * process, which is worker and client both (the client's part is the gateway's: start, await).
 */
export async function bareLoad(bare: BareStack, options: LoadOptions): Promise<LoadWindow> {
  console.log(`bench: bare one-activity workflows, ${options.seconds} s at ${options.chats} in flight…`);
  const groups = { ...(await stackProcesses()), bare: bare.process.pid };
  await bare.startLoad(options.chats, 1);
  return measureWindow({ mark: () => bare.mark(), stop: () => bare.stopLoad() }, groups, options);
}

interface TurnSample {
  /** when the turn ended (performance.now()) */
  at: number;
  sendMs: number;
  /** whether the send's answer carried its workflow's start (`triggerRunId`) */
  started: boolean;
  polls: number;
}

/** A client's turn: send into its chat, poll the snapshot every pollMs until the run ends. */
function turnOf(client: ServiceClient, options: LoadOptions, samples: TurnSample[]) {
  return async (chatId: string) => {
    const started = performance.now();
    const turn = await client.send({ text: 'hello bench', chatId });
    const sendMs = performance.now() - started;
    const { snapshot, polls } = await client.pollUntil(turn, isTerminal, options.pollMs);
    if (snapshot.status !== 'COMPLETE')
      throw new Error(`run ${turn.runId} ended ${snapshot.status}: ${snapshot.error}`);
    samples.push({ at: performance.now(), sendMs, started: turn.triggerRunId !== null, polls });
  };
}

export interface LoadRows {
  rows: Row[];
  /** tables printed under the main one: CPU by process, memory */
  tables: { title: string; markdown: string }[];
  data: Record<string, unknown>;
}

/**
 * The service under load, on fresh gateway and worker processes: idle sends first (one client,
 * nothing else running), then a measured round of `chats` clients, then (for the memory row) runs
 * waiting on their plans, a second round with one client more (for the send row), and the waiting
 * runs again.
 */
export async function serviceLoad(
  bench: Bench,
  service: ServiceProcesses,
  options: LoadOptions,
  /** the bare baseline's window before the service's round 1, and a way to measure it again after */
  bare: { before: LoadWindow; after(): Promise<LoadWindow> } | undefined,
): Promise<LoadRows> {
  const { selection } = bench;
  const client = service.client(bench.user);
  const groups = { ...(await stackProcesses()), gateway: service.gateway.pid, worker: service.worker.pid };
  const out: LoadRows = { rows: [], tables: [], data: {} };
  const memory: Record<string, Memory> = {};
  const rss = async (): Promise<Memory> => {
    const mib = (b: number) => Math.round(b / 2 ** 20);
    const gateway = await service.gateway.memoryBytes();
    const worker = await service.worker.memoryBytes();
    return {
      gatewayMiB: mib(gateway.rss),
      workerMiB: mib(worker.rss),
      gatewayHeapMiB: mib(gateway.heapUsed),
      workerHeapMiB: mib(worker.heapUsed),
    };
  };
  // Each client has a chat of its own, and sends its next turn into it once the last has ended.
  const chats: string[] = [];
  for (let i = 0; i <= options.chats; i++) chats.push(await client.createChat());
  const lanesOf = (samples: TurnSample[], lanes: number) => {
    const turn = turnOf(client, options, samples);
    return closedLoop(lanes, (lane) => turn(chats[lane] as string));
  };

  let idleSend: Figures | undefined;
  let idleFloor: Figures | undefined;
  const idleSamples: TurnSample[] = [];
  // The send row's reading aid: a bare admission (bare-admission.ts), idle and under the same load.
  // Its workflows time out, so none is left open under the rows after it.
  const bareAdmit = bareAdmission(bench, { workflowTimeout: '10s' });
  if (selection.has('send')) {
    console.log(`bench: idle send, ${options.idleSends} turns one after the other…`);
    const turn = turnOf(client, options, idleSamples);
    const chatId = await client.createChat();
    await measure(() => turn(chatId), 5, 1);
    idleSamples.length = 0;
    const started = performance.now();
    await measure(() => turn(chatId), options.idleSends, 1);
    idleSend = sendFigures(idleSamples, (performance.now() - started) / 1000, 1);
    await measure(bareAdmit, 5, 1);
    idleFloor = await measure(bareAdmit, options.idleSends, 1);
  }

  if (selection.has('sustained', 'cpu', 'memory')) {
    console.log(
      `bench: sustained load, ${options.chats} chats polling every ${options.pollMs} ms (round 1)…`,
    );
    const samples: TurnSample[] = [];
    const lanes = lanesOf(samples, options.chats);
    const statements = selection.has('cpu') ? await statementWindow(bench.stack.db.pool) : undefined;
    const round = await measureWindow(lanes, groups, options, statements);
    const { cpu } = round;
    const inWindow = samples.filter((s) => lanes.inWindow(s.at));
    const polls = inWindow.reduce((sum, s) => sum + s.polls, 0);
    // Read before the bare load's second window: a minute idle lets the gateway's heap shrink,
    // and round 1's reading would then understate its peak (the memory row compares peaks).
    if (selection.has('memory')) memory['after sustained load (round 1)'] = await rss();
    const windows = bare && ([bare.before, await bare.after()] as const);
    const baseline = windows && bracketed(...windows);
    out.data.sustained = {
      service: round,
      baseline,
      baselineWindows: windows && { before: windows[0], after: windows[1] },
      pollsPerTurn: polls / inWindow.length,
      pollsPerSecond: polls / cpu.seconds,
      sendUnderLoad: sendFigures(inWindow, cpu.seconds, options.chats),
    };
    if (windows && baseline) {
      out.rows.push(...loadRows(bench, round, baseline, options, windows));
      out.tables.push(cpuTable(round, baseline, options, polls / inWindow.length));
    }
    if (round.statements) out.tables.push(statementsTable(round.statements, completed(round)));
  }

  if (selection.has('memory')) {
    await waitingRound(bench.stack, client, options, '1');
    memory[`after ${options.waitingRuns} waiting (round 1)`] = await rss();
  }

  if (selection.has('send', 'memory')) {
    // One client more than round 1: whichever client sends, the other `chats` have turns executing.
    console.log(`bench: sustained load (round 2), ${options.chats + 1} chats…`);
    const samples: TurnSample[] = [];
    const lanes = lanesOf(samples, options.chats + 1);
    // Beside the lanes, one client admitting bare sends back to back, timed alike.
    const floorSamples: { at: number; ms: number }[] = [];
    let floorRunning = idleFloor !== undefined;
    const floorLane = (async () => {
      while (floorRunning) {
        const started = performance.now();
        await bareAdmit();
        floorSamples.push({ at: performance.now(), ms: performance.now() - started });
      }
    })();
    const round = await measureWindow(lanes, groups, options).finally(() => (floorRunning = false));
    await floorLane;
    const busySamples = samples.filter((s) => lanes.inWindow(s.at));
    const busy = sendFigures(busySamples, round.cpu.seconds, options.chats + 1);
    out.data.round2 = { service: round, send: busy };
    if (idleSend && idleFloor && selection.has('send')) {
      const row = latencyRow('send', `send while ${options.chats} turns execute`, busy, idleSend, {
        p50: MAX_BUSY_SEND_RATIO,
      });
      const withId = (samples: TurnSample[]) =>
        `${Math.round((100 * samples.filter((s) => s.started).length) / Math.max(1, samples.length))}% with triggerRunId`;
      const floorRec = recorder();
      for (const f of floorSamples) if (lanes.inWindow(f.at)) floorRec.add(f.ms);
      const busyFloor = floorRec.figures(round.cpu.seconds * 1000, 1);
      row.service += `; ${withId(busySamples)}`;
      row.baseline += ` idle; ${withId(idleSamples)}`;
      // Not a target: how much the same load slows the least a send can be.
      row.ratio += `; bare admission ${fmt(busyFloor.p50, 1)} / ${fmt(idleFloor.p50, 1)} = ${fmt(busyFloor.p50 / idleFloor.p50, 2)}x`;
      row.data = { ...(row.data as object), bareAdmission: { idle: idleFloor, underLoad: busyFloor } };
      out.rows.push(row);
    }
    if (selection.has('memory')) memory['after sustained load (round 2)'] = await rss();
  }

  if (selection.has('memory')) {
    await waitingRound(bench.stack, client, options, '2');
    memory[`after ${options.waitingRuns} waiting (round 2)`] = await rss();
    const growth = memoryGrowth(memory);
    out.rows.push({
      key: 'memory',
      name: 'memory',
      measure: 'MiB resident, round 2 peak − round 1 peak',
      service: `gateway ${signed(growth.delta.gatewayMiB)}, worker ${signed(growth.delta.workerMiB)}`,
      baseline: '-',
      ratio: '-',
      target: 'no growth (≤ 15% or 32 MiB)',
      meets: growth.ok,
      data: memory,
    });
    out.tables.push({
      title:
        'resident memory of the gateway and worker processes (the memory row), and their live heap after the same full collection',
      markdown: markdownTable(
        ['moment', 'gateway MiB', 'worker MiB', 'gateway heap MiB', 'worker heap MiB'],
        Object.entries(memory).map(([k, v]) => [
          k,
          String(v.gatewayMiB),
          String(v.workerMiB),
          String(v.gatewayHeapMiB),
          String(v.workerHeapMiB),
        ]),
      ),
    });
    out.data.memoryMiB = memory;
  }
  return out;
}

/** Send latencies of the turns that ended in a window. */
function sendFigures(samples: TurnSample[], seconds: number, concurrency: number): Figures {
  const rec = recorder();
  for (const s of samples) rec.add(s.sendMs);
  return rec.figures(seconds * 1000, concurrency);
}

function loadRows(
  bench: Bench,
  service: LoadWindow,
  bare: LoadWindow,
  options: LoadOptions,
  bareWindows: readonly [LoadWindow, LoadWindow],
): Row[] {
  const [before, after] = bareWindows;
  const rows: Row[] = [];
  const s = service.figures;
  const b = bare.figures;
  if (bench.selection.has('sustained')) {
    const ratio = s.throughput / b.throughput;
    rows.push({
      key: 'sustained',
      name: `sustained, ${options.chats} chats polling every ${options.pollMs} ms`,
      measure: `per s (p50 ms), ${options.seconds} s`,
      service: `${fmt(s.throughput, 2)} turns (${fmt(s.p50, 0)})${s.errors ? `, ${s.errors} errors` : ''}`,
      baseline: `${fmt(b.throughput, 2)} bare wf (${fmt(b.p50, 0)}); ${fmt(before.figures.throughput, 1)} before, ${fmt(after.figures.throughput, 1)} after`,
      ratio: `${fmt(ratio, 2)}x`,
      target: `≥${MIN_THROUGHPUT_RATIO}x`,
      meets: ratio >= MIN_THROUGHPUT_RATIO && !s.errors,
      data: { service: s, baseline: b },
    });
  }
  if (bench.selection.has('cpu')) {
    const ratio = cpuPerOp(service) / cpuPerOp(bare);
    rows.push({
      key: 'cpu',
      name: 'server CPU per turn',
      measure: 'CPU ms, all stack processes',
      service: `${fmt(cpuPerOp(service), 1)} per turn`,
      baseline: `${fmt(cpuPerOp(bare), 1)} per bare wf; ${fmt(cpuPerOp(before), 1)} before, ${fmt(cpuPerOp(after), 1)} after`,
      ratio: `${fmt(ratio, 2)}x`,
      target: `≤${MAX_CPU_RATIO}x`,
      meets: ratio <= MAX_CPU_RATIO && !s.errors,
      data: {
        service: service.cpu,
        baseline: bare.cpu,
        turns: completed(service),
        bareWorkflows: completed(bare),
      },
    });
  }
  return rows;
}

/** Where a turn's CPU goes, process by process, beside where a bare workflow's goes. */
function cpuTable(service: LoadWindow, bare: LoadWindow, options: LoadOptions, pollsPerTurn: number) {
  const groups = [...new Set([...Object.keys(service.cpu.groups), ...Object.keys(bare.cpu.groups)])];
  const share = (ms: number, w: LoadWindow) => `${fmt((100 * ms) / w.cpu.stack, 0)}%`;
  const cell = (w: LoadWindow, g: string) =>
    g in w.cpu.groups ? `${fmt(cpuPerOp(w, g), 1)} (${share(w.cpu.groups[g] ?? 0, w)})` : '-';
  const busy = (w: LoadWindow, ms: number) => `${fmt(ms / (w.cpu.seconds * 1000), 2)} cores`;
  const cores = os.cpus().length;
  return {
    title:
      `CPU by process over the windows (ms per completed turn or bare workflow, share of the stack); ` +
      `${completed(service)} turns in ${options.seconds} s, and ${completed(bare)} bare workflows in ` +
      `${options.seconds} s before and after them, ` +
      `${fmt(pollsPerTurn, 1)} polls per turn; ${cores} cores`,
    markdown: markdownTable(
      ['process', 'service: ms per turn', 'bare: ms per workflow'],
      [
        ...groups.map((g) => [g, cell(service, g), cell(bare, g)]),
        [
          'stack (counted)',
          `${fmt(cpuPerOp(service), 1)}, ${busy(service, service.cpu.stack)}`,
          `${fmt(cpuPerOp(bare), 1)}, ${busy(bare, bare.cpu.stack)}`,
        ],
        ['bench load client (not counted)', busy(service, service.cpu.bench), busy(bare, bare.cpu.bench)],
        [
          'rest of the machine (not counted)',
          busy(service, service.cpu.elsewhere),
          busy(bare, bare.cpu.elsewhere),
        ],
      ],
    ),
  };
}

/** Runs waiting on plan approval, `waitingRuns` of them, then all cancelled and ended. */
async function waitingRound(stack: TestStack, client: ServiceClient, options: LoadOptions, round: string) {
  console.log(`bench: memory round ${round}: ${options.waitingRuns} runs waiting on plan approval…`);
  const runs: { chatId: string; runId: string }[] = [];
  const sent = await measure(
    async () => {
      runs.push(
        await client.send({
          text: 'crop this to the left half',
          image_urls: ['http://127.0.0.1:9/photo.png'],
          planMode: true,
        }),
      );
    },
    options.waitingRuns,
    options.chats,
  );
  if (sent.errors) throw new Error(`${sent.errors} plan-mode sends failed`);
  const ids = runs.map((r) => r.runId);
  await until(stack, ids, 'WAITING');
  await measure((i) => client.cancel(runs[i] as { chatId: string; runId: string }), runs.length, 16);
  await until(stack, ids, 'ENDED');
}

/** Until every run is WAITING, or has ended; read from the database (not the API, which it would load). */
async function until(stack: TestStack, runIds: string[], state: 'WAITING' | 'ENDED'): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await stack.db.pool.query<{ waiting: number; ended: number }>(
      `SELECT count(*) FILTER (WHERE status = 'WAITING')::int AS waiting,
              count(*) FILTER (WHERE status IN ('COMPLETE', 'FAILED', 'CANCELLED'))::int AS ended
         FROM "Run" WHERE id = ANY($1::uuid[])`,
      [runIds],
    );
    const { waiting, ended } = rows[0] as { waiting: number; ended: number };
    if (state === 'WAITING' && ended) throw new Error(`${ended} plan-mode runs ended instead of waiting`);
    const reached = state === 'WAITING' ? waiting : ended;
    if (reached === runIds.length) return;
    if (Date.now() > deadline) throw new Error(`only ${reached} of ${runIds.length} runs reached ${state}`);
    await sleep(250);
  }
}

/** One reading of the memory row: resident memory (what the row compares) and live heap, in MiB. */
interface Memory {
  gatewayMiB: number;
  workerMiB: number;
  gatewayHeapMiB: number;
  workerHeapMiB: number;
}

const signed = (n: number) => (n < 0 ? `${n}` : `+${n}`);

/**
 * Round 2's peak against round 1's, per process: within 15% or 32 MiB counts as no growth.
 * Resident memory is a high-water mark (V8 keeps what it once needed, and the worker's sticky
 * cache holds every waiting run), so the reading after round 2's sustained load still carries
 * round 1's 1,000 waiting runs, while round 1's came before any: only peaks compare like with
 * like. A leak raises each round's peak above the one before.
 */
function memoryGrowth(memory: Record<string, Memory>) {
  const peak = (round: string, proc: 'gatewayMiB' | 'workerMiB') =>
    Math.max(
      ...Object.entries(memory)
        .filter(([moment]) => moment.endsWith(`(round ${round})`))
        .map(([, m]) => m[proc]),
    );
  const delta = { gatewayMiB: 0, workerMiB: 0 };
  let ok = true;
  for (const proc of ['gatewayMiB', 'workerMiB'] as const) {
    const r1 = peak('1', proc);
    const grown = peak('2', proc) - r1;
    if (grown > Math.max(32, r1 * 0.15)) ok = false;
    delta[proc] = grown;
  }
  return { ok, delta };
}
