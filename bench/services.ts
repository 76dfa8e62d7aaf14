import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { atNice } from '../apps/stack/process/priority';

const ROOT = path.resolve(__dirname, '..');
const READY_TIMEOUT_MS = 120_000;

export interface ServiceProcess {
  name: string;
  pid: number;
  /** Resident set size of the process, from /proc, right after a full garbage collection. */
  /** Resident memory and live heap, read after a full collection. */
  memoryBytes(): Promise<{ rss: number; heapUsed: number }>;
  /** Sends `message` with a fresh id and resolves with the process's reply carrying that id. */
  request<T>(message: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts `apps/<app>/main.ts` as its own Node process, the way `npm run start:<app>` does but
 * without the npm and tsx wrapper processes, so its pid is the process whose memory and CPU we
 * report; at `nice`, as `npm start` runs a worker (apps/stack/process/priority.ts). Resolves once the
 * app says it is ready (core/process/ready.ts).
 */
export function startService(
  app: 'gateway' | 'worker',
  env: Record<string, string>,
  nice = 0,
): Promise<ServiceProcess> {
  return startProcess(app, path.join(ROOT, 'apps', app, 'main.ts'), env, nice);
}

/** Starts a TypeScript entry point as its own Node process; it says 'ready' over IPC when it is. */
export async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  nice = 0,
): Promise<ServiceProcess> {
  // spawn rather than fork, so that nice(1) can exec Node: the pid is Node's either way.
  const [command, args] = atNice(nice, process.execPath, [
    '--expose-gc',
    '--import',
    'tsx',
    '--require',
    path.join(__dirname, 'gc-hook.cjs'),
    // BENCH_CPU_PROF=<dir>: each process writes a V8 CPU profile there when it stops (bench/README.md).
    ...(process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(process.env.BENCH_CPU_PROF, name)}`]
      : []),
    entry,
  ]);
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} not ready in ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.once('message', (m) => {
      if (m !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready`));
    });
  });
  const pid = child.pid as number;
  let nextId = 0;
  const reply = <T>(matches: (m: unknown) => boolean) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: unknown) => {
        if (!matches(m)) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`${name} exited with ${code} before it answered`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return {
    name,
    pid,
    async memoryBytes() {
      const collected = reply<{ heapUsedBytes: number }>(
        (m) => typeof m === 'object' && m !== null && (m as { gcDone?: unknown }).gcDone === true,
      );
      child.send('gc');
      const { heapUsedBytes } = await collected;
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      return { rss: Number(kb) * 1024, heapUsed: heapUsedBytes };
    },
    async request<T>(message: Record<string, unknown>) {
      const id = ++nextId;
      const answered = reply<{ id: number; error?: string } & T>(
        (m) => typeof m === 'object' && m !== null && (m as { id?: unknown }).id === id,
      );
      child.send({ ...message, id });
      const answer = await answered;
      if (answer.error) throw new Error(`${name}: ${answer.error}`);
      return answer;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
