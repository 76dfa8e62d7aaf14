import { spawn } from 'node:child_process';
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

/**
 * Runs a program to the end and answers its stdout; a non-zero exit rejects with its stderr's
 * tail. The program runs in a process group of its own, and when `signal` aborts (the call was
 * cancelled or timed out) the whole group is killed: not only the program but anything it
 * started, which a wrapper script (nice, timeout, a container shim) would otherwise leave running.
 */
export function runProgram(program: string, args: string[], signal: AbortSignal): Promise<string> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => running.forEach(killGroup));
  }
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const child = spawn(program, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    const kill = () => {
      if (pid !== undefined) killGroup(pid);
    };
    if (pid !== undefined) running.add(pid);
    signal.addEventListener('abort', kill, { once: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-STDERR_TAIL)));
    const settle = () => {
      signal.removeEventListener('abort', kill);
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
      else if (code === 0) resolve(stdout);
      else reject(new Error(`${path.basename(program)} exited with ${code}: ${stderr.trim()}`));
    });
  });
}
