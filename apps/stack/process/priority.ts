import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { liveProcess } from './procfs';

/**
 * How much lower the stack's background tier (the Temporal server and the workers) runs than its
 * front door (the gateway and PostgreSQL) when they share a machine, as `npm start` runs them.
 *
 * Under load a send is answered once its turn is durable, by the gateway and PostgreSQL alone
 * (it waits for its workflow's start only while starts come in time); executing turns is what the
 * worker and Temporal do meanwhile. At one priority, a send on saturated cores queues behind every
 * turn in flight, at every hop; below them, it waits for none (docs/performance.md, The front door
 * first). The front door goes first, and execution takes the rest of the CPU, which is all of it
 * whenever the front door is idle. 0 turns it off (STACK_BACKGROUND_NICE).
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
 * runs can miss a thread being started meanwhile. nice(1) adds to the nice it finds, so it is
 * given the difference from ours: a stack started under `nice -n 5` runs its background at 10,
 * not 15 (and at 5 when asked for less than it already has, which an unprivileged user cannot
 * undo).
 */
export function atNice(nice: number, command: string, args: readonly string[]): [string, string[]] {
  const adjustment = nice - os.getPriority();
  if (nice === 0 || adjustment <= 0) return [command, [...args]];
  if (!NICE) {
    throw new Error(
      `STACK_BACKGROUND_NICE=${nice} needs nice(1), found at neither /usr/bin/nice nor /bin/nice: install coreutils, or set STACK_BACKGROUND_NICE=0`,
    );
  }
  return [NICE, ['-n', String(adjustment), command, ...args]];
}

/** The kernel takes one autogroup change per 100 ms from a process without CAP_SYS_ADMIN. */
const AUTOGROUP_RETRY_MS = 110;
const AUTOGROUP_ATTEMPTS = 20;
/** One change at a time, so children started together do not refuse each other. */
let autogroupChanges: Promise<unknown> = Promise.resolve();

/**
 * Gives the session `pid` leads the weight of `nice`. Where autogroups apply (the kernel's
 * default, for processes outside a CPU cgroup of their own, as under `npm start` on this
 * machine), CPU is shared out between sessions first and by nice only inside one, so a child
 * started in a session of its own (apps/stack/process/child.ts) would otherwise compete at full weight
 * whatever its threads' nice. Resolves false only when the kernel kept refusing the change;
 * true once it is made, or when there is nothing to change: no autogroups, a process in
 * another's session, or one that has exited.
 */
export function lowerAutogroup(pid: number, nice: number): Promise<boolean> {
  // A child left at the front door's priority does not wait behind a change being retried.
  if (nice === 0) return Promise.resolve(true);
  const change = autogroupChanges.then(() => changeAutogroup(pid, nice));
  autogroupChanges = change;
  return change;
}

async function changeAutogroup(pid: number, nice: number): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    if ((await liveProcess(pid))?.session !== pid) return true;
    try {
      await writeFile(`/proc/${pid}/autogroup`, String(nice));
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ESRCH') return true;
      if (code !== 'EAGAIN' || attempt === AUTOGROUP_ATTEMPTS) return false;
      await new Promise((resolve) => setTimeout(resolve, AUTOGROUP_RETRY_MS));
    }
  }
}
