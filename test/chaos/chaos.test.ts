import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { FaultPoint } from '../../core/config/fault-points';
import type { TemporalService } from '../../apps/stack/embedded/temporal-cluster';
import { createTemporalClient, type TemporalClientHandle } from '../../core/temporal/connection';
import { startMinio, type MinioServer } from '../support/minio';
import { declareNotRun } from '../support/not-run';
import { markdownTable, momentTable, writeResults, type MomentRow } from '../support/reliability-results';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import {
  appEnv,
  signUp,
  startImageServer,
  startInfra,
  subscribe,
  type Account,
  type Infra,
  type TemporalEngine,
} from '../faults/support';
import { checkHistories } from './histories';
import { aimAt, anyInFlight, inFlight, MOMENTS, type InFlight, type Moment, type Victim } from './moments';
import {
  approvePlans,
  directUrl,
  drive,
  orphanFiles,
  orphanObjects,
  seeded,
  startReceiverProcess,
  Topology,
  waitFor,
  type Kind,
  type Receiver,
  type Request,
} from './support';

/**
 * Chaos (npm run test:chaos): real load over two gateways and two workers, sent by a client that
 * retries as the README asks (the same Idempotency-Key until it gets an answer), while something
 * is SIGKILLed or starved. Each fault is aimed at a named moment (moments.ts: an activity
 * running, a POST open at the receiver, a statement open in PostgreSQL, a request open at a
 * gateway), or at one the code announces (a fault point, core/process/fault.ts), or struck at a
 * random moment; every fault says which moments it found in flight. Then the database, the
 * receiver's log and the Temporal histories are read: nothing lost, nothing doubled, every
 * execution closed as its row says. CHAOS_RUNS requests per scenario (CI: few; locally: hundreds),
 * CHAOS_FAULTS faults per scenario, CHAOS_SEED to replay a run, CHAOS_SCENARIOS (names' prefixes)
 * to pick scenarios (the others are declared, not run). A scenario whose faults did not all hit
 * is run again (up to three times) rather than passed. CHAOS_ENGINE picks the Temporal it runs
 * on: `dev` (the dev server, the default) or `cluster`.
 */
const RUNS = Number(process.env.CHAOS_RUNS ?? 8);
const FAULTS = Number(process.env.CHAOS_FAULTS ?? 1);
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ONLY = process.env.CHAOS_SCENARIOS?.split(',').map((s) => s.trim());
/** CHAOS_ENGINE=cluster runs every scenario on the production topology's Temporal cluster. */
const ENGINE = ((engine: string): TemporalEngine => {
  if (engine !== 'dev' && engine !== 'cluster')
    throw new Error(`CHAOS_ENGINE must be dev or cluster, not "${engine}"`);
  return engine;
})(process.env.CHAOS_ENGINE ?? 'dev');
const ATTEMPTS = 3;
const TERMINAL = ['COMPLETE', 'FAILED', 'CANCELLED'];
/**
 * A blocking tool call's route waits this long (the service's default is 5 minutes). A retry
 * whose first request died with its gateway finds the request's key held for this and a minute
 * more (operations/idempotency.ts), so it bounds how long such a client waits for its answer.
 */
const TOOL_ROUTE_TIMEOUT = '30s';

/** One fault: what it was aimed at, what it found in flight, whether it hit, and when it struck. */
interface Strike {
  aimed?: Moment;
  seen: InFlight;
  hit: boolean;
  at: number;
}

interface Result {
  scenario: string;
  seed: number;
  runs: number;
  strikes: Strike[];
  terminal: string;
  lost: number;
  doubled: number;
  mismatched: number;
  recover: string;
  orphans: number;
  reposts: number;
  /** Sends beyond each request's first, and how many of those were answered as replays. */
  resent: number;
  replayed: number;
  executions: number;
  attempts: number;
}

interface Tally {
  lost: string[];
  doubled: string[];
  /** Executions that closed otherwise than their rows say. */
  mismatched: string[];
  /** Files in storage no finished tool call owns. */
  orphans: string[];
  /** POSTs of a delivery the receiver had already acted on (a kill between its answer and its record). */
  reposts: number;
  executions: number;
}

interface World {
  infra: Infra;
  /** Between the gateways and workers and PostgreSQL (the checks read it directly): slowed at will. */
  postgresProxy: TcpProxy;
  topology: Topology;
  account: Account;
  userId: string;
  receiver: Receiver;
  temporal: TemporalClientHandle;
  imageUrl: string;
  storageDir: string;
  /** Files or objects in the storage the apps use now that no finished tool call owns. */
  orphans: () => Promise<string[]>;
}

/** Injects one fault. `last`: the scenario's last, after which the victim is started plain. */
type Injector = (world: World, random: ReturnType<typeof seeded>, last: boolean) => Promise<Strike>;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const probeOf = (world: World) => ({
  topology: world.topology,
  pool: world.infra.pool,
  receiver: world.receiver,
});

/** How long an aimed fault waits for its moment before it counts as a miss. */
const AIM_TIMEOUT_MS = 30_000;

/**
 * A random moment (0.5–3 s on, by the seed), or the first moment after it with some of the
 * victim's work in flight (up to 15 s), then a SIGKILL, and `restart` after a seeded while. The
 * strike names every moment it found in flight, and hits when it found one.
 */
function randomKill(
  victim: Victim,
  kill: (world: World) => Promise<unknown>,
  restart: (world: World) => Promise<unknown>,
): Injector {
  return async (world, random) => {
    await pause(random.int(500, 3_000));
    let seen: InFlight = {};
    await waitFor(
      async () => {
        seen = await inFlight(probeOf(world), victim);
        return anyInFlight(seen) || undefined;
      },
      { timeoutMs: 15_000, intervalMs: 20, what: 'work in flight' },
    ).catch(() => false);
    await kill(world);
    const at = Date.now();
    await pause(random.int(200, 2_000));
    await restart(world);
    return { seen, hit: anyInFlight(seen), at };
  };
}

/**
 * A SIGKILL aimed at `moment` of the victim's work (moments.ts aimAt, which holds the moment open
 * where it would pass too quickly), from a seeded moment 0–1 s into the load; `restart` after a
 * seeded while.
 */
function aimedKill(
  victim: Victim,
  moment: Moment,
  kill: (world: World) => Promise<unknown>,
  restart: (world: World) => Promise<unknown>,
): Injector {
  return async (world, random) => {
    await pause(random.int(0, 1_000));
    const { seen, letGo } = await aimAt(probeOf(world), victim, moment, AIM_TIMEOUT_MS);
    await kill(world);
    const at = Date.now();
    await letGo();
    await pause(random.int(200, 2_000));
    await restart(world);
    return { aimed: moment, seen: seen ?? {}, hit: (seen?.[moment] ?? 0) > 0, at };
  };
}

const killWorker0 = (w: World) => w.topology.killWorker(0);
const startWorker0 = (w: World) => w.topology.startWorker(0);

/** The moment a fault point stands for. */
const POINT_MOMENTS: Record<FaultPoint, Moment> = {
  admission: 'mid-request',
  'model-step': 'mid-activity',
  'webhook-answered': 'mid-POST',
  'storage-put': 'mid-activity',
  'tool-recorded': 'mid-activity',
  'run-finished': 'mid-activity',
};

/** The victim is started with the fault point armed; when it announces the point, SIGKILL. */
function pointKill(point: FaultPoint, victim: 'gateway' | 'worker'): Injector & Stage {
  const armed = { FAULT_PAUSE_AT: point };
  const restart = (world: World, extra: Record<string, string>) =>
    victim === 'gateway' ? world.topology.startGateway(1, extra) : world.topology.startWorker(1, extra);
  const injector: Injector = async (world, _random, last) => {
    const proc = victim === 'gateway' ? world.topology.gateways[1]?.process : world.topology.workers[1];
    assert.ok(proc, `the ${victim} to kill`);
    // The load never reaching the point means nothing was in flight there: not a hit.
    const reached = await proc.waitForLine(new RegExp(`fault point reached: ${point}`), 90_000).then(
      () => true,
      () => false,
    );
    const moment = POINT_MOMENTS[point];
    const seen = await inFlight(probeOf(world), victim === 'gateway' ? { gateway: 1 } : { worker: 1 });
    // The announced point is the moment itself, held there by the process.
    if (reached) seen[moment] = Math.max(1, seen[moment] ?? 0);
    if (victim === 'gateway') await world.topology.killGateway(1);
    else await world.topology.killWorker(1);
    const at = Date.now();
    await restart(world, last ? {} : armed);
    return { aimed: moment, seen, hit: reached, at };
  };
  return Object.assign(injector, {
    arm: async (world: World) => {
      if (victim === 'gateway') await world.topology.killGateway(1);
      else await world.topology.killWorker(1);
      await restart(world, armed);
    },
  });
}

/**
 * Both workers' model made slow (LOCAL_MODEL_PACE: a reply streams for seconds), then a worker
 * SIGKILLed while a step of its own streams: the step is retried from its start on the other
 * worker, and the text it had written is replaced, not appended to.
 */
function slowModel(): Injector & Required<Stage> {
  const slow = { LOCAL_MODEL_PACE: '250ms' };
  const replaceWorkers = async (world: World, extra: Record<string, string>) => {
    for (const i of [0, 1]) {
      await world.topology.killWorker(i);
      await world.topology.startWorker(i, extra);
    }
  };
  const streaming = async (world: World) => {
    const { rows } = await world.infra.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "Run" WHERE status = 'RUNNING' AND text <> ''`,
    );
    return Number(rows[0]?.n) > 0 || undefined;
  };
  const injector: Injector = async (world, random) => {
    await pause(random.int(500, 3_000));
    const victim = random.int(0, 1);
    await waitFor(() => streaming(world).catch(() => undefined), {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'a model step streaming',
    }).catch(() => false);
    const { seen } = await aimAt(probeOf(world), { worker: victim }, 'mid-activity', AIM_TIMEOUT_MS);
    await world.topology.killWorker(victim);
    const at = Date.now();
    await pause(random.int(200, 2_000));
    await world.topology.startWorker(victim, slow);
    return { aimed: 'mid-activity', seen: seen ?? {}, hit: (seen?.['mid-activity'] ?? 0) > 0, at };
  };
  return Object.assign(injector, {
    arm: (world: World) => replaceWorkers(world, slow),
    disarm: (world: World) => replaceWorkers(world, {}),
  });
}

const run = promisify(execFile);
const DISK_FULL = 'local storage disk full';

/** How often the workers have been refused a write for want of space, by what they logged. */
function spaceRefusals(world: World): number {
  return world.topology.workers.reduce((n, w) => n + (w?.output().match(/ENOSPC/g)?.length ?? 0), 0);
}

/** Writes `file` until its disk refuses another byte. */
async function fill(file: string): Promise<void> {
  const handle = await open(file, 'w');
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const block = Buffer.alloc(size);
      for (;;) {
        const written = await handle.write(block).then(
          (r) => r.bytesWritten,
          (err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOSPC') return 0;
            throw err;
          },
        );
        if (written < size) break;
      }
    }
  } finally {
    await handle.close();
  }
  assert.equal((await statfs(path.dirname(file))).bavail, 0, 'the disk is full');
}

/**
 * Local storage's disk full for a while (2–6 s, from a moment picked by the seed) while tool calls write their
 * outputs: a file takes every free byte of the tmpfs the storage lives on (the suite mounts one
 * for this scenario), then goes. A write refused meanwhile fails its attempt, which is retried;
 * nothing half-written may stay. It hits when a worker was refused a write (ENOSPC in its log).
 */
function diskFull(): Injector {
  return async (world, random) => {
    // Early in the load (0–1 s on): a crop writes its output milliseconds after it starts, so a
    // disk filled once one is seen running comes too late for it, and the few calls of a short
    // load may all be over by a later moment.
    await pause(random.int(0, 1_000));
    const before = spaceRefusals(world);
    const filler = path.join(world.storageDir, 'filler');
    await fill(filler);
    await pause(random.int(2_000, 6_000));
    const refusals = spaceRefusals(world) - before;
    await rm(filler);
    return { aimed: 'mid-activity', seen: { 'mid-activity': refusals }, hit: refusals > 0, at: Date.now() };
  };
}

/**
 * Object storage down for a while: the gateways and workers are moved onto MinIO (STORAGE_DRIVER=s3)
 * for this scenario, and MinIO is SIGKILLed 0–1 s into the load (a crop stores its output
 * milliseconds after it starts), then started again on the same data 2–6 s later. A put refused
 * meanwhile fails its attempt, which is retried. It hits when a worker was refused by MinIO
 * (ECONNREFUSED at its address in the worker's log).
 */
function objectStorageDown(): Injector & Required<Stage> {
  let minio: MinioServer | undefined;
  // Before the load starts and after it has settled: nothing is in flight to lose.
  const moveApps = (world: World, extra: Record<string, string>) =>
    Promise.all(
      [0, 1].map(async (i) => {
        await world.topology.killGateway(i);
        await world.topology.killWorker(i);
        await world.topology.startGateway(i, extra);
        await world.topology.startWorker(i, extra);
      }),
    );
  const refusals = (world: World, address: string) =>
    world.topology.workers.reduce(
      (n, w) => n + (w?.output().split(`ECONNREFUSED ${address}`).length ?? 1) - 1,
      0,
    );
  const injector: Injector = async (world, random) => {
    assert.ok(minio, 'armed');
    const address = new URL(minio.endpoint).host;
    await pause(random.int(0, 1_000));
    const before = refusals(world, address);
    await minio.kill();
    await pause(random.int(2_000, 6_000));
    const refused = refusals(world, address) - before;
    await minio.restart();
    return { aimed: 'mid-activity', seen: { 'mid-activity': refused }, hit: refused > 0, at: Date.now() };
  };
  return Object.assign(injector, {
    arm: async (world: World) => {
      const started = (minio = await startMinio());
      await moveApps(world, started.env);
      world.orphans = () => orphanObjects(started, world.infra.pool);
    },
    disarm: async (world: World) => {
      await moveApps(world, {});
      world.orphans = () => orphanFiles(world.storageDir, world.infra.pool);
      await minio?.stop();
      minio = undefined;
    },
  });
}

/**
 * The Temporal server SIGKILLed: the dev server as a whole, or each of the cluster's services that
 * serve the runs on its own (frontend, history, matching; its worker service runs only Temporal's
 * own system workflows, so a kill of it hits no work of ours).
 */
function temporalKills(): Scenario[] {
  const victims: (TemporalService | undefined)[] =
    ENGINE === 'dev' ? [undefined] : ['frontend', 'history', 'matching'];
  return victims.map((service) => ({
    name: `Temporal ${service ?? 'server'} SIGKILL (random moment)`,
    inject: randomKill(
      'temporal',
      (w) => w.infra.killTemporal(service),
      (w) => w.infra.startTemporal(service),
    ),
  }));
}

/** What a scenario may do to the world before its load starts, and after it has settled. */
interface Stage {
  arm?: (world: World) => Promise<void>;
  disarm?: (world: World) => Promise<void>;
}

interface Scenario {
  name: string;
  inject: Injector & Stage;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'worker SIGKILL (random moment)',
    inject: randomKill({ worker: 0 }, killWorker0, startWorker0),
  },
  {
    name: 'worker SIGKILL mid-activity (a model step or tool call of its own running)',
    inject: aimedKill({ worker: 0 }, 'mid-activity', killWorker0, startWorker0),
  },
  {
    name: 'worker SIGKILL mid-POST (its POST held open by the receiver)',
    inject: aimedKill({ worker: 0 }, 'mid-POST', killWorker0, startWorker0),
  },
  {
    name: 'worker SIGKILL mid-transaction (its statement waiting inside PostgreSQL)',
    inject: aimedKill({ worker: 0 }, 'mid-transaction', killWorker0, startWorker0),
  },
  {
    name: 'gateway SIGKILL mid-request (the next request opened)',
    inject: aimedKill(
      { gateway: 0 },
      'mid-request',
      (w) => w.topology.killGateway(0),
      (w) => w.topology.startGateway(0),
    ),
  },
  {
    name: 'PostgreSQL SIGKILL (random moment)',
    inject: randomKill(
      'postgres',
      (w) => w.infra.killPostgres(),
      (w) => w.infra.startPostgres(),
    ),
  },
  {
    name: 'PostgreSQL SIGKILL mid-transaction (a statement of the service waiting inside it)',
    inject: aimedKill(
      'postgres',
      'mid-transaction',
      (w) => w.infra.killPostgres(),
      (w) => w.infra.startPostgres(),
    ),
  },
  {
    name: 'PostgreSQL slow (100–400 ms added to every packet, for 2–6 s)',
    // Statements take seconds for a while: transactions, locks and leases held long, deadlines of
    // the calls around them passing. Nothing may be lost or done twice for it. It hits when work
    // was in flight as the slowness began and the proxy did hold traffic back; the load may well
    // end inside the window (CI's few requests often do), which is no miss.
    inject: async (world, random) => {
      await pause(random.int(500, 3_000));
      let seen: InFlight = {};
      await waitFor(
        async () => {
          seen = await inFlight(probeOf(world), 'postgres');
          return anyInFlight(seen) || undefined;
        },
        { timeoutMs: 15_000, intervalMs: 20, what: 'work in flight' },
      ).catch(() => false);
      const heldBefore = world.postgresProxy.heldChunks();
      world.postgresProxy.slow(random.int(100, 400));
      await pause(random.int(2_000, 6_000));
      world.postgresProxy.slow(0);
      return {
        seen,
        hit: anyInFlight(seen) && world.postgresProxy.heldChunks() > heldBefore,
        at: Date.now(),
      };
    },
  },
  { name: `${DISK_FULL} (for 2–6 s, tool outputs being written)`, inject: diskFull() },
  { name: 'object storage down (MinIO SIGKILLed for 2–6 s)', inject: objectStorageDown() },
  ...temporalKills(),
  {
    name: 'webhook receiver SIGKILL mid-POST (a POST held open)',
    inject: aimedKill(
      'receiver',
      'mid-POST',
      (w) => w.receiver.kill(),
      (w) => w.receiver.start(),
    ),
  },
  { name: 'model slow, worker SIGKILLed mid-stream', inject: slowModel() },
  {
    name: 'gateway at admission (commit done, workflow not started)',
    inject: pointKill('admission', 'gateway'),
  },
  { name: 'worker at model-step (reply back, not recorded)', inject: pointKill('model-step', 'worker') },
  {
    name: 'worker at webhook-answered (POST answered, not recorded)',
    inject: pointKill('webhook-answered', 'worker'),
  },
  {
    name: 'worker at storage-put (tool output on disk, not in place)',
    inject: pointKill('storage-put', 'worker'),
  },
];

const picked = (scenario: Scenario) => !ONLY || ONLY.some((o) => scenario.name.startsWith(o));

describe(`chaos (real processes, SIGKILL at random and at the worst moments)${ENGINE === 'cluster' ? ', on the Temporal cluster' : ''}`, function () {
  this.timeout(0);
  let world: World;
  let image: Awaited<ReturnType<typeof startImageServer>>;
  const results: Result[] = [];
  const notRun = SCENARIOS.filter((s) => !picked(s)).map((s) => s.name);
  for (const name of notRun) declareNotRun(name, 'left out by CHAOS_SCENARIOS');

  // What is up so far, so that a before-hook failing half-way still stops all of it.
  const up: Partial<World> & { dir?: string; mounted?: string } = {};

  before(async function () {
    this.timeout(300_000);
    console.log(`      CHAOS_SEED=${SEED} CHAOS_RUNS=${RUNS} CHAOS_FAULTS=${FAULTS} CHAOS_ENGINE=${ENGINE}`);
    up.dir = await mkdtemp(path.join(tmpdir(), 'chaos-'));
    const infra = (up.infra = await startInfra(ENGINE));
    const storageDir = (up.storageDir = path.join(up.dir, 'files'));
    if (SCENARIOS.some((s) => s.name.startsWith(DISK_FULL) && picked(s))) {
      // The disk that fills is one of the storage's own, not the machine's.
      await mkdir(storageDir, { recursive: true });
      await run('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', storageDir]).catch((err: Error) => {
        throw new Error(
          `the ${DISK_FULL} scenario puts local storage on a tmpfs of its own, and mount needs root: ${err.message}`,
        );
      });
      up.mounted = storageDir;
    }
    const target = new URL(infra.databaseUrl);
    const postgresProxy = (up.postgresProxy = await startTcpProxy(target.host));
    target.host = postgresProxy.address;
    const env = appEnv(
      { ...infra, databaseUrl: target.toString() },
      {
        PLAN_APPROVAL_TIMEOUT: '10m',
        STORAGE_LOCAL_DIR: storageDir,
        CREDIT_GRANT_ON_SIGN_UP: '1000000',
        TOOL_ROUTE_TIMEOUT,
      },
    );
    const topology = (up.topology = new Topology(env));
    await topology.start();
    const receiver = (up.receiver = await startReceiverProcess(path.join(up.dir, 'receiver.log'), SEED));
    const account = await signUp(topology.url(0) as string);
    const { rows } = await infra.pool.query<{ id: string }>(`SELECT id FROM "User"`);
    assert.equal(rows.length, 1, 'one account drives the load');
    await subscribe(topology.url(0) as string, account, receiver.url);
    image = await startImageServer({ width: 64, height: 48, background: '#5a3' });
    const temporal = (up.temporal = createTemporalClient({
      address: infra.temporalAddress,
      namespace: 'default',
    }));
    world = {
      infra,
      postgresProxy,
      topology,
      account,
      userId: rows[0]?.id as string,
      receiver,
      temporal,
      imageUrl: image.url,
      storageDir,
      orphans: () => orphanFiles(storageDir, infra.pool),
    };
  });

  after(async () => {
    if (results.length) {
      const moments = momentRows(results);
      console.log(momentTable(moments));
      console.log(
        markdownTable(
          [
            'scenario',
            'seed',
            'terminal',
            'executions read',
            'closed otherwise than the row',
            'time to recover',
            'orphan files',
            're-POSTs deduped',
            'sends retried (replayed)',
            'attempts',
          ],
          results.map((r) => [
            r.scenario,
            r.seed,
            r.terminal,
            r.executions,
            r.mismatched,
            r.recover,
            r.orphans,
            r.reposts,
            `${r.resent} (${r.replayed})`,
            r.attempts,
          ]),
        ),
      );
      const file = await writeResults(
        'chaos',
        ENGINE,
        {
          CHAOS_SEED: SEED,
          CHAOS_RUNS: RUNS,
          CHAOS_FAULTS: FAULTS,
          CHAOS_ENGINE: ENGINE,
          ...(ONLY ? { CHAOS_SCENARIOS: ONLY.join(',') } : {}),
        },
        { moments, scenarios: results, notRun },
      );
      console.log(`\n      written to ${path.relative(process.cwd(), file)}`);
    }
    await up.topology?.stop();
    await up.receiver?.kill();
    await image?.close();
    await up.temporal?.connection.close();
    await up.postgresProxy?.close();
    await up.infra?.close();
    if (up.mounted) await run('umount', [up.mounted]);
    if (up.dir) await rm(up.dir, { recursive: true, force: true });
  });

  SCENARIOS.forEach((scenario, index) => {
    if (!picked(scenario)) return;
    it(`${scenario.name}: nothing lost, nothing doubled, every execution closed as its row says`, async () => {
      let result: Result | undefined;
      let tally: Tally | undefined;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const seed = (SEED + index * 7919 + attempt * 104_729) >>> 0;
        ({ result, tally } = await runScenario(world, scenario, seed, attempt));
        const missed = result.strikes.filter((s) => !s.hit).length;
        if (missed === 0) break;
        console.log(`      ${scenario.name}: ${missed} fault(s) hit nothing in flight; running it again`);
      }
      assert.ok(result && tally);
      results.push(result);
      assert.ok(
        result.strikes.every((s) => s.hit),
        `every fault hit ${result.strikes[0]?.aimed ?? 'work in flight'} (seed ${result.seed}): ${JSON.stringify(result.strikes)}`,
      );
      assert.deepEqual(tally.lost, [], `nothing lost (seed ${result.seed})`);
      assert.deepEqual(tally.doubled, [], `nothing doubled (seed ${result.seed})`);
      assert.deepEqual(tally.mismatched, [], `every execution closed as its row says (seed ${result.seed})`);
      assert.deepEqual(tally.orphans, [], `no orphan files (seed ${result.seed})`);
    });
  });
});

/** One row per scenario and moment it can strike: its faults aimed there, and hits there. */
function momentRows(results: Result[]): MomentRow[] {
  return results.flatMap((r) =>
    MOMENTS.filter((m) => r.strikes.some((s) => s.aimed === m || m in s.seen)).map((moment) => ({
      scenario: r.scenario,
      moment,
      runs: r.runs,
      aimed: r.strikes.filter((s) => s.aimed === moment).length,
      hits: r.strikes.filter((s) => (s.seen[moment] ?? 0) > 0).length,
      lost: r.lost,
      doubled: r.doubled,
    })),
  );
}

async function runScenario(
  world: World,
  scenario: Scenario,
  seed: number,
  attempt: number,
): Promise<{ result: Result; tally: Tally }> {
  const random = seeded(seed);
  const { infra, topology, account } = world;
  if (scenario.inject.arm) await scenario.inject.arm(world);
  // Executions of this load start after this (a second of margin for the clocks' resolution).
  const since = new Date(Date.now() - 1_000);
  const kinds: Kind[] = ['text', 'tool', 'plan', 'direct'];
  const requests: Request[] = Array.from({ length: RUNS }, (_, i) => {
    const marker = `m${seed.toString(36)}x${i}`;
    return {
      marker,
      kind: kinds[random.int(0, kinds.length - 1)] as Kind,
      key: `chaos-${marker}`,
      answers: [],
    };
  });
  const approvals = approvePlans(topology, account, infra.pool);
  const deadline = Date.now() + 600_000;
  const load = drive({
    topology,
    account,
    requests,
    imageUrl: world.imageUrl,
    random: seeded(seed ^ 0x5bd1e995),
    deadline,
  });
  const strikes: Strike[] = [];
  for (let n = 0; n < FAULTS; n++) strikes.push(await scenario.inject(world, random, n === FAULTS - 1));
  await load;
  const tally = await settle(world, requests, approvals.lastAnswer, since);
  const recover = (Date.now() - (strikes[strikes.length - 1]?.at ?? Date.now())) / 1000;
  await approvals.stop();
  if (scenario.inject.disarm) await scenario.inject.disarm(world);
  const resent = requests.reduce((n, r) => n + Math.max(0, r.answers.length - 1), 0);
  return {
    result: {
      scenario: scenario.name,
      seed,
      runs: requests.length,
      strikes,
      terminal: `${tally.terminal}/${tally.runs}`,
      lost: tally.lost.length,
      doubled: tally.doubled.length,
      mismatched: tally.mismatched.length,
      recover: `${recover.toFixed(1)} s`,
      orphans: tally.orphans.length,
      reposts: tally.reposts,
      resent,
      replayed: requests.reduce((n, r) => n + r.answers.filter((a) => a.replayed).length, 0),
      executions: tally.executions,
      attempts: attempt,
    },
    tally,
  };
}

/**
 * Waits until every run of the load has ended and every delivery of it has settled, then counts,
 * per request (its Idempotency-Key, its marker), what the service did: runs, tool calls, charges,
 * events and deliveries, from the database and the receiver's log; then reads the Temporal
 * histories of the load (histories.ts).
 */
async function settle(
  world: World,
  requests: Request[],
  lastApproval: (runId: string) => string | undefined,
  since: Date,
): Promise<Tally & { runs: number; terminal: number }> {
  const { pool } = world.infra;
  const lost: string[] = [];
  const doubled: string[] = [];
  for (const r of requests) if (r.refused) lost.push(`${r.marker} (${r.kind}) refused: ${r.refused}`);

  const turns = requests.filter((r) => r.kind !== 'direct');
  const direct = requests.filter((r) => r.kind === 'direct');
  const query = async <T extends object>(sql: string, params: unknown[]): Promise<T[]> =>
    (await pool.query<T>(sql, params)).rows;
  // PostgreSQL may have just come back: the probes below retry a failed query with the rest of their wait.
  const tolerant =
    <T>(probe: () => Promise<T | undefined>) =>
    () =>
      probe().catch(() => undefined);

  const runsOf = () =>
    query<{ marker: string; runId: string; status: string }>(
      `SELECT substring(m."contentBlocks"::text from ' (m[a-z0-9]+x[0-9]+)') AS marker, r.id AS "runId", r.status
         FROM "Message" m JOIN "Run" r ON r."messageId" = m.id
        WHERE m.role = 'user' AND m."contentBlocks"::text ~ ANY($1::text[])`,
      [turns.map((t) => `${t.marker}"`)],
    );
  let runs = await waitFor(
    tolerant(async () => {
      const found = await runsOf();
      return found.length >= turns.filter((t) => !t.refused).length &&
        found.every((f) => TERMINAL.includes(f.status))
        ? found
        : undefined;
    }),
    { timeoutMs: 300_000, intervalMs: 500, what: 'every run of the load to end' },
  ).catch(async () => runsOf());
  const terminal = runs.filter((r) => TERMINAL.includes(r.status)).length;
  for (const r of runs) {
    if (r.status === 'WAITING')
      lost.push(`run ${r.runId} ended WAITING; its last approval: ${lastApproval(r.runId) ?? 'none sent'}`);
    else if (r.status !== 'COMPLETE') lost.push(`run ${r.runId} ended ${r.status}`);
  }
  const byMarker = new Map<string, string[]>();
  for (const r of runs) byMarker.set(r.marker, [...(byMarker.get(r.marker) ?? []), r.runId]);
  for (const t of turns.filter((t) => !t.refused)) {
    const ids = byMarker.get(t.marker) ?? [];
    if (ids.length === 0) lost.push(`turn ${t.marker} has no run`);
    if (ids.length > 1) doubled.push(`turn ${t.marker} (key ${t.key}) has ${ids.length} runs`);
    // Every answer to the key names the one run the service admitted for it.
    if (ids.length === 1 && t.runId !== ids[0])
      lost.push(`turn ${t.marker} was answered run ${t.runId}, its run is ${ids[0]}`);
  }
  const allRuns = runs;
  runs = runs.filter((r) => r.status === 'COMPLETE');
  const runIds = runs.map((r) => r.runId);

  // Messages: one user and one assistant message per run.
  const messages = await query<{ runId: string; role: string; n: number }>(
    `SELECT "runId", role, count(*)::int AS n FROM "Message" WHERE "runId" = ANY($1::uuid[]) GROUP BY "runId", role`,
    [runIds],
  );
  for (const runId of runIds) {
    for (const role of ['user', 'assistant']) {
      const n = messages.find((m) => m.runId === runId && m.role === role)?.n ?? 0;
      if (n === 0) lost.push(`run ${runId}: no ${role} message`);
      if (n > 1) doubled.push(`run ${runId}: ${n} ${role} messages`);
    }
  }

  // Text: a step retried after its worker died replaces what it had streamed; appended to it, the
  // reply would start over inside itself.
  const texts = await query<{ runId: string; text: string }>(
    `SELECT id AS "runId", text FROM "Run" WHERE id = ANY($1::uuid[])`,
    [runIds],
  );
  for (const { runId, text } of texts) {
    const head = text.slice(0, 24);
    if (head.length === 24 && text.indexOf(head, 1) !== -1) doubled.push(`run ${runId}: its text repeats`);
  }

  // Tool calls: one per tool turn, none per text turn, one success per direct call's key (a call
  // its route gave up on, 504, may be followed by the retry's own); each charged once.
  const kindOf = new Map(turns.map((t) => [t.marker, t.kind]));
  const calls = await query<{ runId: string; n: number }>(
    `SELECT "runId", count(*)::int AS n FROM "ToolCall" WHERE "runId" = ANY($1::uuid[]) GROUP BY "runId"`,
    [runIds],
  );
  for (const r of runs) {
    const n = calls.find((c) => c.runId === r.runId)?.n ?? 0;
    const expected = kindOf.get(r.marker) === 'text' ? 0 : 1;
    if (n < expected) lost.push(`run ${r.runId}: no tool call`);
    if (n > expected) doubled.push(`run ${r.runId}: ${n} tool calls`);
  }
  const directCalls = await waitFor(
    tolerant(async () => {
      const found = await query<{ url: string; id: string; status: string; providerRunId: string | null }>(
        `SELECT input->>'image_url' AS url, id, status, "providerRunId" FROM "ToolCall"
          WHERE input->>'image_url' = ANY($1::text[])`,
        [direct.map((d) => directUrl(world.imageUrl, d))],
      );
      return found.every((c) => c.status !== 'RUNNING') ? found : undefined;
    }),
    { timeoutMs: 300_000, intervalMs: 500, what: 'every direct tool call to end' },
  );
  for (const d of direct.filter((d) => !d.refused)) {
    const mine = directCalls.filter((c) => c.url === directUrl(world.imageUrl, d));
    const succeeded = mine.filter((c) => c.status === 'SUCCEEDED');
    if (succeeded.length === 0)
      lost.push(
        `direct call ${d.marker}: no success (${mine.map((c) => c.status).join(', ') || 'no tool call'})`,
      );
    if (succeeded.length > 1)
      doubled.push(`direct call ${d.marker} (key ${d.key}): ${succeeded.length} successes`);
    if (succeeded.length === 1 && succeeded[0]?.providerRunId !== d.providerRunId)
      lost.push(
        `direct call ${d.marker} was answered ${d.providerRunId}, its success is ${succeeded[0]?.providerRunId}`,
      );
  }
  const toolCalls = await query<{
    id: string;
    runId: string | null;
    status: string;
    providerRunId: string | null;
    charges: number;
  }>(
    `SELECT t.id, t."runId", t.status, t."providerRunId",
            (SELECT count(*)::int FROM "CreditLedgerEntry" l WHERE l."toolCallId" = t.id) AS charges
       FROM "ToolCall" t WHERE t."runId" = ANY($1::uuid[]) OR t.id = ANY($2::uuid[])`,
    [allRuns.map((r) => r.runId), directCalls.map((c) => c.id)],
  );
  for (const c of toolCalls) {
    if (c.status === 'SUCCEEDED' && c.charges === 0) lost.push(`tool call ${c.id}: not charged`);
    if (c.status !== 'SUCCEEDED' && c.charges > 0)
      doubled.push(`tool call ${c.id}: ${c.status}, and charged`);
    if (c.charges > 1) doubled.push(`tool call ${c.id}: charged ${c.charges} times`);
  }
  const succeededCalls = toolCalls.filter((c) => c.status === 'SUCCEEDED');

  // Webhooks: each event once per endpoint, event and run (or call), delivered, and applied by
  // the receiver once by its id.
  const keys = [...runIds, ...succeededCalls.map((c) => c.id)];
  const expected = runIds.length * 2 + succeededCalls.length;
  const deliveriesOf = () =>
    query<{ id: string; envelopeId: string; event: string; key: string; status: string }>(
      `SELECT id, "envelopeId", event, "idempotencyKey" AS key, status FROM "WebhookDelivery"
        WHERE "idempotencyKey" = ANY($1::text[])`,
      [keys],
    );
  const deliveries = await waitFor(
    tolerant(async () => {
      const found = await deliveriesOf();
      return found.length >= expected && found.every((d) => d.status !== 'PENDING') ? found : undefined;
    }),
    { timeoutMs: 120_000, intervalMs: 500, what: 'every delivery to settle' },
  ).catch(deliveriesOf);
  const perEvent = new Map<string, number>();
  for (const d of deliveries)
    perEvent.set(`${d.event} ${d.key}`, (perEvent.get(`${d.event} ${d.key}`) ?? 0) + 1);
  for (const key of runIds)
    for (const event of ['agent.started', 'agent.completed'])
      if (!perEvent.has(`${event} ${key}`)) lost.push(`${event} of ${key} not recorded`);
  for (const c of succeededCalls)
    if (!perEvent.has(`tool.completed ${c.id}`)) lost.push(`tool.completed of ${c.id} not recorded`);
  for (const [k, n] of perEvent) if (n > 1) doubled.push(`${k}: ${n} deliveries`);
  const lines = world.receiver.lines();
  const appliedById = new Map<string, number>();
  const appliedByEvent = new Map<string, Set<string>>();
  const posts = new Map<string, number>();
  for (const l of lines) posts.set(l.deliveryId, (posts.get(l.deliveryId) ?? 0) + 1);
  for (const l of lines.filter((l) => l.outcome === 'applied')) {
    appliedById.set(l.deliveryId, (appliedById.get(l.deliveryId) ?? 0) + 1);
    const k = `${l.event} ${l.key}`;
    appliedByEvent.set(k, (appliedByEvent.get(k) ?? new Set()).add(l.deliveryId));
  }
  for (const d of deliveries) {
    const n = appliedById.get(d.id) ?? 0;
    if (d.status !== 'DELIVERED' || n === 0)
      lost.push(`delivery ${d.id} (${d.event}) ${d.status}, applied ${n} times`);
    if (n > 1) doubled.push(`delivery ${d.id} applied ${n} times`);
    const ids = appliedByEvent.get(`${d.event} ${d.key}`)?.size ?? 0;
    if (ids > 1) doubled.push(`${d.event} of ${d.key} received under ${ids} ids`);
  }
  const ids = new Set(deliveries.map((d) => d.id));
  const reposts = lines.filter((l) => l.outcome === 'duplicate' && ids.has(l.deliveryId)).length;

  // What Temporal recorded of it all.
  const attemptRows = await query<{ deliveryId: string; attempt: number; statusCode: number | null }>(
    `SELECT "deliveryId", attempt, "statusCode" FROM "WebhookAttempt" WHERE "deliveryId" = ANY($1::uuid[])`,
    [[...ids]],
  );
  const attempts = new Map<string, { attempt: number; statusCode: number | null }[]>();
  for (const a of attemptRows) attempts.set(a.deliveryId, [...(attempts.get(a.deliveryId) ?? []), a]);
  const histories = await checkHistories(world.temporal.client, {
    userId: world.userId,
    since,
    runs: allRuns,
    toolCalls: toolCalls.map(({ id, runId, status, providerRunId }) => ({
      id,
      runId,
      status,
      providerRunId,
    })),
    deliveries,
    attempts,
    posts,
  });
  lost.push(...histories.lost);
  doubled.push(...histories.doubled);

  const orphans = await world.orphans();
  return {
    lost,
    doubled,
    mismatched: histories.mismatched,
    orphans,
    reposts,
    executions: histories.executions,
    runs: allRuns.length,
    terminal,
  };
}
