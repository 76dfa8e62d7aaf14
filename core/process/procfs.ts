import { readdir, readFile, readlink, realpath } from 'node:fs/promises';

/**
 * What Linux's /proc says about other processes: who holds a port, who works in a folder, whether
 * a pid in a lock file is still a live process. Used to name what stands in the way of a start.
 */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces, cut at 160 characters. */
  command: string;
}

/**
 * The live process with this pid, or undefined when there is none. A zombie (exited, not yet
 * reaped by its parent) counts as gone: it holds no port, file or memory any more, although
 * `kill(pid, 0)` still succeeds on it.
 */
export async function liveProcess(pid: number): Promise<ProcessInfo | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X' || state === 'x') return undefined;
  const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const command = raw.split('\0').filter(Boolean).join(' ');
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  return {
    pid,
    ppid: Number(fields[1]),
    command: (command || `[${name}]`).slice(0, 160),
  };
}

/** "pid 123 (postgres -D /data)": a process as a message shows it. */
export function describeProcess(info: ProcessInfo): string {
  return `pid ${info.pid} (${info.command})`;
}

async function allPids(): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  return entries.filter((e) => /^\d+$/.test(e)).map(Number);
}

/** Inodes of the TCP sockets listening on `port`, from /proc/net/tcp and tcp6. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; column 9 is the inode.
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A' && cols[9] && cols[9] !== '0') {
        inodes.add(cols[9]);
      }
    }
  }
  return inodes;
}

/**
 * The live process listening on a TCP port, or undefined when no process of ours can be seen
 * holding it (nobody listens, or it belongs to a user whose file descriptors we may not read).
 */
export async function listenerOf(port: number): Promise<ProcessInfo | undefined> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return undefined;
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  for (const pid of await allPids()) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (wanted.has(target)) {
        const info = await liveProcess(pid);
        if (info) return info;
      }
    }
  }
  return undefined;
}

/** Live processes whose working directory is `dir` (PostgreSQL's postmaster and backends work in theirs). */
export async function processesWorkingIn(dir: string): Promise<ProcessInfo[]> {
  const target = await realpath(dir).catch(() => dir);
  const found: ProcessInfo[] = [];
  for (const pid of await allPids()) {
    if (pid === process.pid) continue;
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (cwd !== target) continue;
    const info = await liveProcess(pid);
    if (info) found.push(info);
  }
  return found;
}
