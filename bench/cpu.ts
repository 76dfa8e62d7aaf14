/**
 * CPU time of the stack's processes, read from /proc: what a turn costs the machine, process by
 * process, as opposed to how long it takes.
 */
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second, the unit of /proc/<pid>/stat's times (100 on every Linux we run on). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const msOf = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND;

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime: the process itself, all its threads */
  own: number;
  /** cutime + cstime: its children that have exited and been waited for */
  reaped: number;
}

async function readStat(pid: number): Promise<Stat | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone between the listing and the read
  }
  // The command name is in parentheses and may hold spaces or parentheses itself.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 of proc(5): state, ppid, …, utime (14), stime, cutime, cstime (17).
  const at = (field: number) => Number(fields[field - 3]);
  return {
    pid,
    ppid: at(4),
    comm: text.slice(open + 1, close),
    own: at(14) + at(15),
    reaped: at(16) + at(17),
  };
}

async function allStats(): Promise<Stat[]> {
  const pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map(Number);
  return (await Promise.all(pids.map(readStat))).filter((s): s is Stat => s !== undefined);
}

/**
 * The bench's own children that make up the stack it started: the Temporal dev server, or each
 * service of the Temporal cluster (named by its --service), and PostgreSQL.
 */
export async function stackProcesses(): Promise<Record<string, number>> {
  const children = (await allStats()).filter((s) => s.ppid === process.pid);
  const found: Record<string, number> = {};
  for (const service of children.filter((s) => s.comm === 'temporal-server')) {
    const args = (await readFile(`/proc/${service.pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    found[`temporal ${args[args.indexOf('--service') + 1] ?? service.pid}`] = service.pid;
  }
  const temporal = children.find((s) => s.comm === 'temporal');
  // The postmaster: its backends, and the walsender, checkpointer and the rest, are its children.
  const postgres = children.find((s) => s.comm === 'postgres');
  if (temporal) found.temporal = temporal.pid;
  if (postgres) found.postgres = postgres.pid;
  return found;
}

export interface CpuSample {
  at: number;
  /** CPU ms per named group since the process started */
  groups: Record<string, number>;
  /** The load client: this process's own CPU, its children not included */
  bench: number;
  /** Busy CPU ms of the whole machine (every core), from /proc/stat */
  machine: number;
}

/**
 * CPU ms used so far by each group: its root process and every live descendant, each with the
 * children it has reaped. A PostgreSQL backend that exits moves from "live descendant" to the
 * postmaster's reaped time, so the sum stays whole whichever side of a sample it ends on.
 */
export async function sampleCpu(groups: Record<string, number>): Promise<CpuSample> {
  const stats = await allStats();
  const children = new Map<number, Stat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const subtree = (pid: number): number => {
    const self = byPid.get(pid);
    if (!self) return 0;
    return self.own + self.reaped + (children.get(pid) ?? []).reduce((sum, c) => sum + subtree(c.pid), 0);
  };
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(groups)) out[name] = msOf(subtree(pid));
  const cpuLine = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpuLine
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    at: Date.now(),
    groups: out,
    bench: msOf(byPid.get(process.pid)?.own ?? 0),
    machine: msOf(user + nice + system + irq + softirq + steal),
  };
}

export interface CpuWindow {
  seconds: number;
  /** CPU ms per group over the window */
  groups: Record<string, number>;
  /** the sum of the groups: the stack's CPU */
  stack: number;
  bench: number;
  /** busy CPU ms of everything else on the machine (other users of a shared machine included) */
  elsewhere: number;
}

export function cpuBetween(from: CpuSample, to: CpuSample): CpuWindow {
  const groups: Record<string, number> = {};
  for (const name of Object.keys(to.groups)) groups[name] = (to.groups[name] ?? 0) - (from.groups[name] ?? 0);
  const stack = Object.values(groups).reduce((a, b) => a + b, 0);
  const bench = to.bench - from.bench;
  return {
    seconds: (to.at - from.at) / 1000,
    groups,
    stack,
    bench,
    elsewhere: Math.max(0, to.machine - from.machine - stack - bench),
  };
}
