import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { liveProcess } from './procfs';

/**
 * How much lower the stack's background tier (the Temporal server and the workers) runs than its
 * front door (the gateway and PostgreSQL) when they share a machine, as `npm start` runs them.
 *
 * A send is answered once its turn is durable, by the gateway and PostgreSQL alone; executing
 * turns is what the worker and Temporal do meanwhile. At one priority, a send on two saturated
 * cores queued behind every turn in flight: 4.4× to 8.6× its idle time while 32 turns executed
 * (bench `send` row). At nice 10 it read 1.3×, and the sustained row stayed over its line (0.59×
 * and 0.67× of a bare workflow); nice 5 gave no more turns and slower sends (README, The front
 * door first). The front door goes first, and execution takes the rest of the CPU, which is all of
 * it whenever the front door is idle. 0 turns it off (STACK_BACKGROUND_NICE).
 */
export const BACKGROUND_NICE = 10;

const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => existsSync(p));

/** STACK_BACKGROUND_NICE, or the default; anything but a nice value from 0 to 19 fails, naming the variable. */
export function backgroundNiceSetting(env: NodeJS.ProcessEnv): number {
  const raw = env.STACK_BACKGROUND_NICE;
  if (raw === undefined || raw === '') return BACKGROUND_NICE;
  const nice = Number(raw);
  if (!/^\d+$/.test(raw) || nice > 19) {
    throw new Error(`STACK_BACKGROUND_NICE must be a whole number from 0 to 19, not "${raw.slice(0, 20)}"`);
  }
  return nice;
}

/**
 * `command args` to run at `nice`: started through nice(1), so every thread the program ever
 * starts inherits it. Linux keeps a nice value per thread, so lowering a process that already
 * runs (lowerPriority) can miss a thread being started meanwhile.
 */
export function atNice(nice: number, command: string, args: readonly string[]): [string, string[]] {
  if (nice === 0 || !NICE) return [command, [...args]];
  return [NICE, ['-n', String(nice), command, ...args]];
}

/**
 * Lowers a running process's CPU priority to `nice`: each of its threads, and its session's
 * autogroup when it leads one (lowerAutogroup). Best effort: a process that has exited leaves
 * nothing to do.
 */
export async function lowerPriority(pid: number, nice: number): Promise<void> {
  if (nice === 0) return;
  const threads = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of threads) {
    try {
      os.setPriority(Number(tid), nice);
    } catch {
      // ESRCH: the thread ended meanwhile.
    }
  }
  await lowerAutogroup(pid, nice);
}

/**
 * Gives the session `pid` leads the weight of `nice`. With autogroups on (the kernel's default
 * for desktops and many servers), CPU is shared out between sessions first and by nice only
 * inside one, so a child started in a session of its own (core/process/child.ts) would otherwise
 * compete at full weight whatever its threads' nice. Nothing to do for a process in another's
 * session, on a kernel without autogroups, or once it has exited.
 */
export async function lowerAutogroup(pid: number, nice: number): Promise<void> {
  if (nice === 0 || (await liveProcess(pid))?.session !== pid) return;
  await writeFile(`/proc/${pid}/autogroup`, String(nice)).catch(() => undefined);
}
