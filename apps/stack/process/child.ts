import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { atNice, lowerAutogroup } from './priority';

/**
 * A process `npm start` supervises. Each child gets a session (and process group) of its own, so a
 * Ctrl-C at the terminal reaches the supervisor alone and the children stop in the order it
 * chooses. The price of that is a lifeline: when the supervisor dies without stopping them (a
 * SIGKILL, the OOM killer), Linux sends each child `lifelineSignal` (PR_SET_PDEATHSIG, set by
 * util-linux's setpriv just before it execs the program), so no child outlives it.
 */
export interface ChildOptions {
  /** How messages name it: "PostgreSQL", "the Temporal dev server", "the worker". */
  name: string;
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** An IPC channel, for a Node child's "ready" message (core/process/ready.ts). */
  ipc?: boolean;
  lifelineSignal: NodeJS.Signals;
  /** Copy its output to ours as it comes (default true); it is kept for error messages either way. */
  echo?: boolean;
  /** Runs it below the supervisor's CPU priority, at this nice value (apps/stack/process/priority.ts). */
  nice?: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Child {
  name: string;
  pid: number;
  process: ChildProcess;
  /** Settles when the process has exited, however it ended. */
  exited: Promise<Exit>;
  /**
   * Settles once its session has the weight of its `nice` (lowerAutogroup): false when the kernel
   * kept refusing it, and its threads' nice is then all it has.
   */
  prioritized: Promise<boolean>;
  running(): boolean;
  /** The last lines it printed, for a message that says why it stopped. */
  lastLines(count?: number): string;
  /** Calls `listener` with each line it prints from now on. */
  onLine(listener: (line: string) => void): void;
  /**
   * Sends `signal` and waits up to `graceMs` for it to exit; past that, SIGKILLs its whole process
   * group (with whatever it started: PostgreSQL's backends, ffmpeg). Resolves once it has exited;
   * says whether it exited within the grace.
   */
  stop(signal: NodeJS.Signals, graceMs: number): Promise<boolean>;
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
const KEPT_LINES = 40;

export function describeExit({ code, signal }: Exit): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

export function startChild(options: ChildOptions): Child {
  const nice = options.nice ?? 0;
  const [program, programArgs] = atNice(nice, options.command, options.args);
  const [command, args] = SETPRIV
    ? [SETPRIV, ['--pdeathsig', options.lifelineSignal, '--', program, ...programArgs]]
    : [program, programArgs];
  const proc = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid }),
  });
  // Its threads run at `nice` from their start; its session, its own, gets the same weight.
  const prioritized = proc.pid === undefined ? Promise.resolve(true) : lowerAutogroup(proc.pid, nice);
  const lines: string[] = [];
  const listeners: ((line: string) => void)[] = [];
  const exited = new Promise<Exit>((resolve) => {
    proc.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn that fails (no such file, no permission) emits 'error' and no 'exit'.
    proc.once('error', (err) => {
      lines.push(`could not start ${options.command}: ${err.message}`);
      resolve({ code: 127, signal: null });
    });
  });
  const echo = options.echo ?? true;
  const collect = (to: NodeJS.WriteStream) => {
    let partial = '';
    return (chunk: Buffer) => {
      if (echo) to.write(chunk);
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > KEPT_LINES) lines.shift();
        for (const listener of listeners) listener(line);
      }
    };
  };
  proc.stdout?.on('data', collect(process.stdout));
  proc.stderr?.on('data', collect(process.stderr));
  const running = () => proc.exitCode === null && proc.signalCode === null && proc.pid !== undefined;

  return {
    name: options.name,
    pid: proc.pid ?? -1,
    process: proc,
    exited,
    prioritized,
    running,
    lastLines: (count = 15) =>
      lines
        .filter((l) => l.trim())
        .slice(-count)
        .join('\n'),
    onLine: (listener) => void listeners.push(listener),
    async stop(signal, graceMs) {
      if (running()) proc.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const inTime = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
      ]);
      clearTimeout(timer);
      if (!inTime) killGroup(proc.pid);
      await exited;
      return inTime;
    },
  };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already empty.
  }
}
