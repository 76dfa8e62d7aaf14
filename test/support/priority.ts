import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import { statFields } from '../../apps/stack/process/procfs';

/**
 * The distinct nice values of a process's threads (Linux keeps one per thread), and its
 * autogroup's: the weight its session gets against the others (every child of the stack leads a
 * session of its own); null on a kernel without autogroups.
 */
export async function priorityOf(pid: number): Promise<{ threads: number[]; autogroup: number | null }> {
  const nices = new Set<number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    // Field 19 of proc(5): nice.
    if (stat) nices.add(Number(statFields(stat)[16]));
  }
  // "/autogroup-123 nice 7"; no file when the kernel has no autogroups.
  const autogroup = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => undefined);
  return {
    threads: [...nices].sort((a, b) => a - b),
    autogroup: autogroup === undefined ? null : Number(/nice (-?\d+)/.exec(autogroup)?.[1]),
  };
}

/**
 * What priorityOf reads of a child of the stack asked to run at `nice` (0: the front door): its
 * threads at that nice, or at this test's own when that is higher (the stack inherits it, and
 * cannot go below it); its session, its own, at `nice`.
 */
export function expectedPriority(nice: number): { threads: number[]; autogroup: number | null } {
  return {
    threads: [Math.max(nice, os.getPriority())],
    autogroup: existsSync('/proc/self/autogroup') ? nice : null,
  };
}
