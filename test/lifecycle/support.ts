/**
 * `npm start` as a user runs it, on ports and a data folder of its own: started, killed with its
 * whole process tree, stopped by signal, and the tree checked for anything left behind.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { portProblem } from '../../apps/stack/process/ports';
import { liveProcess, type ProcessInfo } from '../../apps/stack/process/procfs';
import { watchOutput, type WatchedOutput } from '../support/output';
import { freePort } from '../../testkit/stack';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');

export interface StackSettings {
  dir: string;
  dataDir: string;
  ports: { postgres: number; temporal: number; temporalUi: number; gateway: number };
  url: string;
  /** Added to the test's environment; an undefined value removes the variable. */
  env: Record<string, string | undefined>;
}

/** Fresh ports and a fresh data folder; `env` adds to (or overrides, or removes) the stack's environment. */
export async function stackSettings(env: Record<string, string | undefined> = {}): Promise<StackSettings> {
  const dir = await mkdtemp(path.join(tmpdir(), 'lifecycle-'));
  // When run as root, PostgreSQL runs as its own system user, which must reach the folder.
  await chmod(dir, 0o755);
  const ports = {
    postgres: await freePort(),
    temporal: await freePort(),
    temporalUi: await freePort(),
    gateway: await freePort(),
  };
  const url = `http://127.0.0.1:${ports.gateway}`;
  return {
    dir,
    dataDir: path.join(dir, 'data'),
    ports,
    url,
    env: {
      STACK_DATA_DIR: path.join(dir, 'data'),
      STACK_POSTGRES_PORT: String(ports.postgres),
      STACK_TEMPORAL_PORT: String(ports.temporal),
      STACK_TEMPORAL_UI_PORT: String(ports.temporalUi),
      PORT: String(ports.gateway),
      // Stacks of other runs may be up on this machine: the operator ports are the OS's pick.
      METRICS_PORT: '0',
      WORKER_HTTP_PORT: '0',
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: url,
      // What `npm start` promises is under test: commits synced, whatever the caller's shell says.
      EMBEDDED_POSTGRES_DURABLE: 'true',
      LOG_LEVEL: 'warn',
      SEND_RATE_LIMIT_PER_MINUTE: '1000000',
      API_RATE_LIMIT_PER_MINUTE: '1000000',
      // One account drives the whole load: its per-user caps are raised, as an operator would.
      MAX_ACTIVE_RUNS_PER_USER: '100000',
      MAX_ACTIVE_TOOL_CALLS_PER_USER: '100000',
      ...env,
    },
  };
}

export interface Stack extends WatchedOutput {
  /** The pid of `npm start`, the leader of its own process group (as in a terminal). */
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
}

/** `npm start`, or `npm run start:cluster` (script `start:cluster`), which prints `[cluster]` lines. */
export function startStack(settings: StackSettings, script: 'start' | 'start:cluster' = 'start'): Stack {
  const env: NodeJS.ProcessEnv = { ...process.env, ...settings.env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  // The stack must start its own PostgreSQL and Temporal, whatever the test's shell points at.
  delete env.DATABASE_URL;
  delete env.TEMPORAL_ADDRESS;
  delete env.TEMPORAL_TASK_QUEUE;
  const child = spawn('npm', ['run', script], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // 'close', not 'exit': only then has everything the process printed been read, and a start
  // that fails at once must fail with what it said.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    pid: child.pid as number,
    ...watchOutput(child, `npm run ${script}`, 180_000),
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
  };
}

/** Starts the stack and waits for `[stack] ready`; a start that fails or exits fails with its output. */
export async function startReady(
  settings: StackSettings,
  script: 'start' | 'start:cluster' = 'start',
  timeoutMs = 180_000,
): Promise<Stack> {
  const stack = startStack(settings, script);
  const tag = script === 'start' ? 'stack' : 'cluster';
  // A start that fails leaves nothing running: the caller has no stack to stop.
  const failed = async (err: Error) => {
    if (stack.running()) await killTree(stack);
    return err;
  };
  const outcome = await Promise.race([
    stack
      .waitForLine(new RegExp(`^\\[${tag}\\] (ready|failed)`, 'm'), timeoutMs)
      .then(() => 'printed' as const),
    stack.exited.then(() => 'exited' as const),
  ]).catch(async (err: Error) => {
    throw await failed(err);
  });
  if (outcome === 'exited' || new RegExp(`^\\[${tag}\\] failed`, 'm').test(stack.output()))
    throw await failed(
      new Error(`npm run ${script} did not come up; it printed:\n${stack.output().slice(-4000)}`),
    );
  return stack;
}

async function parentsOfAll(): Promise<Map<number, number>> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  return parents;
}

/** Every live process descending from `pid` (itself included), whatever its session or group. */
export async function processTree(pid: number): Promise<ProcessInfo[]> {
  const parents = await parentsOfAll();
  const tree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of parents) {
      if (tree.has(parent) && !tree.has(child)) {
        tree.add(child);
        grew = true;
      }
    }
  }
  const found = await Promise.all([...tree].map((p) => liveProcess(p)));
  return found.filter((p): p is ProcessInfo => p !== undefined);
}

/** Those of `processes` still alive (the same pid running the same command). */
export async function stillAlive(processes: ProcessInfo[]): Promise<ProcessInfo[]> {
  const now = await Promise.all(processes.map((p) => liveProcess(p.pid)));
  return processes.filter((p, i) => now[i]?.command === p.command);
}

/**
 * SIGKILLs the whole tree at once, as a power cut, the OOM killer taking everything or
 * `docker kill` would, and waits until none of it runs. Returns how many processes it killed.
 */
export async function killTree(stack: Stack): Promise<number> {
  const tree = await processTree(stack.pid);
  for (const p of tree) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await waitFor(async () => ((await stillAlive(tree)).length === 0 ? true : undefined), {
    timeoutMs: 10_000,
    what: 'the killed tree to be gone',
  });
  await stack.exited;
  return tree.length;
}

/** The stack's ports that something still listens on. */
export async function busyPorts(settings: StackSettings): Promise<string[]> {
  const problems = await Promise.all(
    Object.values(settings.ports).map((port) => portProblem(port, '127.0.0.1')),
  );
  return problems.filter((p): p is string => p !== undefined);
}

export async function removeSettings(settings: StackSettings): Promise<void> {
  await rm(settings.dir, { recursive: true, force: true });
}
