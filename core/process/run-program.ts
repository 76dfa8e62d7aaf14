import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

const STDERR_TAIL = 2_000;

/** Process groups still running, killed if this process exits first (a backstop for shutdown). */
const running = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** What a program run on untrusted input may take. */
export interface ProgramLimits {
  /** Wall-clock time; past it the whole group is killed. */
  timeoutMs: number;
  /** Address space (`ulimit -v`), in bytes: an allocation past it fails inside the program. */
  maxMemoryBytes: number;
}

export class ProgramTimeoutError extends Error {
  constructor(program: string, timeoutMs: number) {
    super(`${path.basename(program)} ran longer than ${timeoutMs} ms and was stopped`);
    this.name = 'ProgramTimeoutError';
  }
}

const resolved = new Map<string, string>();

/**
 * The program's absolute path, looked up on this process's PATH: the program itself gets an empty
 * environment, PATH included, so the lookup cannot be left to it.
 */
function resolveProgram(program: string): string {
  if (program.includes('/')) return program;
  const known = resolved.get(program);
  if (known) return known;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      resolved.set(program, candidate);
      return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return program;
}

/**
 * Runs a program to the end and answers its stdout; a non-zero exit rejects with its stderr's
 * tail. The program gets an empty environment (no secret of this process reaches it), a memory
 * ceiling and a deadline. It runs in a process group of its own, and when `signal` aborts or the
 * deadline passes the whole group is killed: not only the program but anything it started, which
 * a wrapper script (nice, timeout, a container shim) would otherwise leave running.
 */
export function runProgram(
  program: string,
  args: string[],
  signal: AbortSignal,
  limits: ProgramLimits,
): Promise<string> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => running.forEach(killGroup));
  }
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const deadline = AbortSignal.timeout(limits.timeoutMs);
    const stop = AbortSignal.any([signal, deadline]);
    // sh sets the ceiling on itself, then becomes the program, which inherits it.
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        'ulimit -v "$1" || exit 126; shift; exec "$@"',
        'sh',
        String(Math.floor(limits.maxMemoryBytes / 1024)),
        resolveProgram(program),
        ...args,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: {} },
    );
    const pid = child.pid;
    const kill = () => {
      if (pid !== undefined) killGroup(pid);
    };
    if (pid !== undefined) running.add(pid);
    stop.addEventListener('abort', kill, { once: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_TAIL)));
    const settle = () => {
      stop.removeEventListener('abort', kill);
      if (pid !== undefined) running.delete(pid);
    };
    child.on('error', (err) => {
      settle();
      reject(err);
    });
    child.on('close', (code) => {
      settle();
      // What the program left behind in its group goes with it.
      kill();
      if (signal.aborted) reject(signal.reason as Error);
      else if (deadline.aborted) reject(new ProgramTimeoutError(program, limits.timeoutMs));
      else if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(program)} exited with ${code}: ${stderr.trim()}`));
    });
  });
}
