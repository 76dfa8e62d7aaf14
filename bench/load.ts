/**
 * The rows under steady load: sustained turns per second and CPU per turn (each against bare
 * one-activity workflows at the same concurrency on the same server), sequential sends while the
 * turns execute (against idle sends, in the same mode), and the memory of the gateway and worker
 * processes. The whole sequence is repeated in rounds; each row reads the median of its rounds.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestStack } from '../testkit/stack';
import type { BareStack } from './bare';
import { bareAdmission, type BareAdmission } from './bare-admission';
import { isTerminal, type ServiceClient } from './client';
import type { Bench, ServiceProcesses } from './context';
import { cpuBetween, sampleCpu, stackProcesses, type CpuWindow } from './cpu';
import { closedLoop, measure, recorder, type Figures } from './measure';
import {
  failedRow,
  fmt,
  latencyRow,
  markdownTable,
  spreadOf,
  withSpread,
  type LatencyRound,
  type Row,
} from './report';
import { statementsTable, statementWindow, type Statement, type StatementWindow } from './statements';

export interface LoadOptions {
  /** how many times the sequence of windows runs; each row reads the median of its rounds */
  rounds: number;
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
 * Several windows summed up as one: their operations and their CPU together. The bare baseline of
 * a service window is the two bare windows on either side of it (bracketed): the test stack's
 * Temporal server keeps every execution in an in-memory SQLite database, and each workflow costs it
 * more CPU as that fills, so a baseline measured only before the service would count that growth
 * against the service. Bracketed, it weighs on both alike.
 */
function combined(windows: readonly LoadWindow[]): LoadWindow {
  const seconds = windows.reduce((t, w) => t + w.cpu.seconds, 0);
  const groups: Record<string, number> = {};
  for (const w of windows)
    for (const [name, ms] of Object.entries(w.cpu.groups)) groups[name] = (groups[name] ?? 0) + ms;
  const sum = (of: (w: LoadWindow) => number) => windows.reduce((t, w) => t + of(w), 0);
  return {
    figures: {
      n: sum((w) => w.figures.n),
      concurrency: windows[0]?.figures.concurrency ?? 0,
      // Not a quantile of the windows together: the mean of their medians, shown for scale.
      p50: sum((w) => w.figures.p50) / windows.length,
      p99: Math.max(...windows.map((w) => w.figures.p99)),
      throughput: sum((w) => w.figures.throughput * w.cpu.seconds) / seconds,
      errors: sum((w) => w.figures.errors),
    },
    cpu: {
      seconds,
      groups,
      stack: sum((w) => w.cpu.stack),
      bench: sum((w) => w.cpu.bench),
      elsewhere: sum((w) => w.cpu.elsewhere),
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

/** One round of the sustained load: the service's window and its bracket of bare windows. */
interface SustainedRound {
  service: LoadWindow;
  bare: LoadWindow;
  bareWindows: readonly [LoadWindow, LoadWindow];
  pollsPerTurn: number;
}

/** One round of the send row: idle sends, then sends while the others' turns execute. */
interface SendRound extends LatencyRound {
  idleStarted: number;
  busyStarted: number;
  bareAdmission: { idle: Figures; underLoad: Figures };
}

/**
 * The service under load, on fresh gateway and worker processes, in `rounds` rounds. Each round:
 * the sustained load of `chats` clients (then, bracketing it, the bare load again); for the memory
 * row, runs waiting on their plans; for the send row, idle sends (one client, nothing else running)
 * and then the same sends while `chats` other clients' turns execute.
 */
export async function serviceLoad(
  bench: Bench,
  service: ServiceProcesses,
  options: LoadOptions,
  /** the bare baseline's window before the service's first, and a way to measure it again */
  bare: { first: LoadWindow; next(): Promise<LoadWindow> } | undefined,
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
  const idleChat = await client.createChat();
  const lanesOf = (samples: TurnSample[], lanes: number) => {
    const turn = turnOf(client, options, samples);
    return closedLoop(lanes, (lane) => turn(chats[lane] as string));
  };
  // The send row's reading aid: a bare admission (bare-admission.ts), idle and under the same load.
  // Its workflows time out, so none is left open under the rows after it.
  const bareAdmit = bareAdmission(bench, { workflowTimeout: '10s' });
  const statements = selection.has('cpu') ? await statementWindow(bench.stack.db.pool) : undefined;
  const sustained: SustainedRound[] = [];
  const sends: SendRound[] = [];
  const counted: Statement[][] = [];
  let turnsCounted = 0;
  let bareBefore = bare?.first;
  let memoryFailed: unknown;
  let sendFailed: unknown;

  for (let round = 1; round <= options.rounds; round++) {
    if (selection.has('sustained', 'cpu', 'memory')) {
      console.log(
        `bench: round ${round}: sustained load, ${options.chats} chats polling every ${options.pollMs} ms…`,
      );
      const samples: TurnSample[] = [];
      const lanes = lanesOf(samples, options.chats);
      const window = await measureWindow(lanes, groups, options, statements);
      const inWindow = samples.filter((s) => lanes.inWindow(s.at));
      const polls = inWindow.reduce((sum, s) => sum + s.polls, 0);
      if (window.statements) {
        counted.push(window.statements);
        turnsCounted += completed(window);
      }
      // Read before the bare load's window: a minute idle lets the gateway's heap shrink, and
      // the reading would then understate the round's peak (the memory row compares peaks).
      if (selection.has('memory')) memory[`after sustained load (round ${round})`] = await rss();
      if (bare && bareBefore) {
        const after = await bare.next();
        sustained.push({
          service: window,
          bare: combined([bareBefore, after]),
          bareWindows: [bareBefore, after],
          pollsPerTurn: polls / inWindow.length,
        });
        bareBefore = after;
      }
    }
    // A phase that fails (a deadline missed on an overloaded machine) fails its own row alone.
    if (selection.has('memory') && !memoryFailed) {
      try {
        await waitingRound(bench.stack, client, options, round);
        memory[`after ${options.waitingRuns} waiting (round ${round})`] = await rss();
      } catch (err) {
        console.error(`bench: round ${round}: the memory row failed:`, err);
        memoryFailed = err;
      }
    }
    if (selection.has('send') && !sendFailed) {
      try {
        sends.push(await sendRound(client, options, idleChat, lanesOf, groups, bareAdmit, round));
        if (selection.has('memory')) memory[`after the send load (round ${round})`] = await rss();
      } catch (err) {
        console.error(`bench: round ${round}: the send row failed:`, err);
        sendFailed = err;
      }
    }
  }
  await bareAdmit.settle();

  if (sustained.length) {
    out.rows.push(...loadRows(bench, sustained, options));
    out.tables.push(cpuTable(sustained, options));
    out.data.sustained = sustained;
  }
  if (counted.length) out.tables.push(statementsTable(summed(counted), turnsCounted));
  if (sendFailed !== undefined) out.rows.push(failedRow('send', sendFailed));
  else if (sends.length) {
    const row = latencyRow('send', `send while ${options.chats} turns execute`, sends, {
      p50: MAX_BUSY_SEND_RATIO,
    });
    const share = (of: (r: SendRound) => number) =>
      `${fmt(spreadOf(sends.map(of)).median, 0)}% with triggerRunId`;
    const floor = spreadOf(sends.map((r) => r.bareAdmission.underLoad.p50 / r.bareAdmission.idle.p50));
    row.service += `; ${share((r) => r.busyStarted)}`;
    row.baseline += ` idle; ${share((r) => r.idleStarted)}`;
    // Not a target: how much the same load slows the least a send can be.
    row.ratio += `; bare admission ${withSpread(floor)}`;
    out.rows.push(row);
  }
  if (selection.has('memory') && memoryFailed !== undefined) out.rows.push(failedRow('memory', memoryFailed));
  else if (selection.has('memory')) {
    const growth = memoryGrowth(memory, options.rounds);
    out.rows.push({
      key: 'memory',
      name: 'memory',
      measure: `MiB resident, ${options.rounds > 2 ? `rounds 2–${options.rounds}` : 'round 2'} peak − round 1 peak`,
      service: `gateway ${growth.delta.gatewayMiB.map(signed).join(', ')}; worker ${growth.delta.workerMiB.map(signed).join(', ')}`,
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

/**
 * One round of the send row. Idle: one client chaining turns in its chat with nothing else
 * running; busy: `chats + 1` clients doing the same, so whichever sends, `chats` others have
 * turns executing. Both on the same gateway, in the same mode (SEND_START_WAIT=off: an answer
 * once the turn is durable). Beside each, one client admitting bare sends back to back.
 */
async function sendRound(
  client: ServiceClient,
  options: LoadOptions,
  idleChat: string,
  lanesOf: (samples: TurnSample[], lanes: number) => ReturnType<typeof closedLoop>,
  groups: Record<string, number>,
  bareAdmit: BareAdmission,
  round: number,
): Promise<SendRound> {
  console.log(`bench: round ${round}: idle send, ${options.idleSends} turns one after the other…`);
  const idleSamples: TurnSample[] = [];
  const turn = turnOf(client, options, idleSamples);
  await measure(() => turn(idleChat), 5, 1);
  idleSamples.length = 0;
  const started = performance.now();
  await measure(() => turn(idleChat), options.idleSends, 1);
  const idle = sendFigures(idleSamples, (performance.now() - started) / 1000, 1);
  await chainedAdmissions(bareAdmit, (n) => n < 5);
  const idleStarted = performance.now();
  const idleFloor = figuresOf(await chainedAdmissions(bareAdmit, (n) => n < options.idleSends), {
    seconds: (performance.now() - idleStarted) / 1000,
  });

  console.log(
    `bench: round ${round}: sends while ${options.chats} turns execute, ${options.chats + 1} chats…`,
  );
  const samples: TurnSample[] = [];
  const lanes = lanesOf(samples, options.chats + 1);
  let floorRunning = true;
  const floorLane = chainedAdmissions(bareAdmit, () => floorRunning);
  const window = await measureWindow(lanes, groups, options).finally(() => (floorRunning = false));
  const floorSamples = (await floorLane).filter((f) => lanes.inWindow(f.at));
  const busySamples = samples.filter((s) => lanes.inWindow(s.at));
  const startedShare = (of: TurnSample[]) =>
    (100 * of.filter((s) => s.started).length) / Math.max(1, of.length);
  return {
    service: sendFigures(busySamples, window.cpu.seconds, options.chats + 1),
    baseline: idle,
    busyStarted: startedShare(busySamples),
    idleStarted: startedShare(idleSamples),
    bareAdmission: { idle: idleFloor, underLoad: figuresOf(floorSamples, window.cpu) },
  };
}

/**
 * Bare admissions one after the other while `more` says so, each timed to its answer; the next
 * begins once the start of the last is done, as a client chaining turns waits for its turn.
 */
async function chainedAdmissions(
  bare: BareAdmission,
  more: (done: number) => boolean,
): Promise<{ at: number; ms: number }[]> {
  const samples: { at: number; ms: number }[] = [];
  while (more(samples.length)) {
    const begun = performance.now();
    const { started } = await bare.admit();
    const at = performance.now();
    samples.push({ at, ms: at - begun });
    await started;
  }
  return samples;
}

const figuresOf = (samples: readonly { ms: number }[], over: { seconds: number }): Figures => {
  const rec = recorder();
  for (const s of samples) rec.add(s.ms);
  return rec.figures(over.seconds * 1000, 1);
};

/** Send latencies of the turns that ended in a window. */
function sendFigures(samples: TurnSample[], seconds: number, concurrency: number): Figures {
  const rec = recorder();
  for (const s of samples) rec.add(s.sendMs);
  return rec.figures(seconds * 1000, concurrency);
}

/** The statements of several windows, each statement's calls and time summed. */
function summed(windows: readonly Statement[][]): Statement[] {
  const by = new Map<string, Statement>();
  for (const w of windows)
    for (const s of w) {
      const seen = by.get(s.query);
      by.set(
        s.query,
        seen ? { ...seen, calls: seen.calls + s.calls, execMs: seen.execMs + s.execMs } : { ...s },
      );
    }
  return [...by.values()].sort((a, b) => b.calls - a.calls);
}

function loadRows(bench: Bench, rounds: readonly SustainedRound[], options: LoadOptions): Row[] {
  const rows: Row[] = [];
  const errors = rounds.reduce((n, r) => n + r.service.figures.errors, 0);
  const each = (of: (w: LoadWindow) => number, digits: number) =>
    rounds.map((r) => `${fmt(of(r.service), digits)}/${fmt(of(r.bare), digits)}`).join(', ');
  if (bench.selection.has('sustained')) {
    const ratio = spreadOf(rounds.map((r) => r.service.figures.throughput / r.bare.figures.throughput));
    rows.push({
      key: 'sustained',
      name: `sustained, ${options.chats} chats polling every ${options.pollMs} ms`,
      measure: `per s, ${options.seconds} s ×${rounds.length}`,
      service: `${fmt(spreadOf(rounds.map((r) => r.service.figures.throughput)).median, 2)} turns${errors ? `, ${errors} errors` : ''}`,
      baseline: `${fmt(spreadOf(rounds.map((r) => r.bare.figures.throughput)).median, 2)} bare wf; rounds ${each((w) => w.figures.throughput, 1)}`,
      ratio: withSpread(ratio),
      target: `≥${MIN_THROUGHPUT_RATIO}x`,
      meets: ratio.median >= MIN_THROUGHPUT_RATIO && !errors,
      data: { ratio, rounds: rounds.map((r) => ({ service: r.service.figures, baseline: r.bare.figures })) },
    });
  }
  if (bench.selection.has('cpu')) {
    const ratio = spreadOf(rounds.map((r) => cpuPerOp(r.service) / cpuPerOp(r.bare)));
    rows.push({
      key: 'cpu',
      name: 'server CPU per turn',
      measure: `CPU ms, all stack processes ×${rounds.length}`,
      service: `${fmt(spreadOf(rounds.map((r) => cpuPerOp(r.service))).median, 1)} per turn`,
      baseline: `${fmt(spreadOf(rounds.map((r) => cpuPerOp(r.bare))).median, 1)} per bare wf; rounds ${each((w) => cpuPerOp(w), 1)}`,
      ratio: withSpread(ratio),
      target: `≤${MAX_CPU_RATIO}x`,
      meets: ratio.median <= MAX_CPU_RATIO && !errors,
      data: {
        ratio,
        rounds: rounds.map((r) => ({
          service: r.service.cpu,
          baseline: r.bare.cpu,
          turns: completed(r.service),
          bareWorkflows: completed(r.bare),
        })),
      },
    });
  }
  return rows;
}

/** Where a turn's CPU goes, process by process, beside where a bare workflow's goes: all rounds together. */
function cpuTable(rounds: readonly SustainedRound[], options: LoadOptions) {
  const service = combined(rounds.map((r) => r.service));
  // Each bare window once: the second of a round's bracket is the first of the next one's.
  const bare = combined([...new Set(rounds.flatMap((r) => r.bareWindows))]);
  const pollsPerTurn =
    rounds.reduce((t, r) => t + r.pollsPerTurn * completed(r.service), 0) / completed(service);
  const groups = [...new Set([...Object.keys(service.cpu.groups), ...Object.keys(bare.cpu.groups)])];
  const share = (ms: number, w: LoadWindow) => `${fmt((100 * ms) / w.cpu.stack, 0)}%`;
  const cell = (w: LoadWindow, g: string) =>
    g in w.cpu.groups ? `${fmt(cpuPerOp(w, g), 1)} (${share(w.cpu.groups[g] ?? 0, w)})` : '-';
  const busy = (w: LoadWindow, ms: number) => `${fmt(ms / (w.cpu.seconds * 1000), 2)} cores`;
  const cores = os.cpus().length;
  return {
    title:
      `CPU by process over the windows of every round (ms per completed turn or bare workflow, share of the stack); ` +
      `${completed(service)} turns in ${rounds.length} windows of ${options.seconds} s, and ${completed(bare)} bare ` +
      `workflows in the ${rounds.length + 1} windows around them, ` +
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
async function waitingRound(stack: TestStack, client: ServiceClient, options: LoadOptions, round: number) {
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
  try {
    await until(stack, ids, 'WAITING');
  } finally {
    // Cancelled and ended even when some never reached WAITING, so none weighs on the rows after.
    await measure((i) => client.cancel(runs[i] as { chatId: string; runId: string }), runs.length, 16);
    await until(stack, ids, 'ENDED');
  }
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
 * Each later round's peak against round 1's, per process: within 15% or 32 MiB counts as no
 * growth. Resident memory is a high-water mark (V8 keeps what it once needed, and the worker's
 * sticky cache holds every waiting run), so only peaks compare like with like; a leak raises each
 * round's peak above the one before.
 */
function memoryGrowth(memory: Record<string, Memory>, rounds: number) {
  const peak = (round: number, proc: 'gatewayMiB' | 'workerMiB') =>
    Math.max(
      ...Object.entries(memory)
        .filter(([moment]) => moment.endsWith(`(round ${round})`))
        .map(([, m]) => m[proc]),
    );
  const delta = { gatewayMiB: [] as number[], workerMiB: [] as number[] };
  let ok = true;
  for (const proc of ['gatewayMiB', 'workerMiB'] as const) {
    const first = peak(1, proc);
    for (let round = 2; round <= rounds; round++) {
      const grown = peak(round, proc) - first;
      if (grown > Math.max(32, first * 0.15)) ok = false;
      delta[proc].push(grown);
    }
  }
  return { ok: ok && rounds > 1, delta };
}
