import { readdir, readFile, readlink, realpath } from 'node:fs/promises';

/**
 * What Linux's /proc says about other processes: who holds a port, who works in a folder, whether
 * a pid in a lock file is still a live process. Used to name what stands in the way of a start.
 */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** The session it belongs to: its own pid when it leads one. */
  session: number;
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
  const fields = statFields(stat);
  const state = fields[0];
  if (state === 'Z' || state === 'X' || state === 'x') return undefined;
  const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  const command = raw.split('\0').filter(Boolean).join(' ');
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  return {
    pid,
    ppid: Number(fields[1]),
    session: Number(fields[3]),
    command: (command || `[${name}]`).slice(0, 160),
  };
}

/**
 * The fields of a /proc/<pid>/stat (or …/task/<tid>/stat) line after the command name, from field
 * 3 (state) of proc(5) on: the name may hold spaces and parentheses, so it is cut at the last ')'.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** "pid 123 (postgres -D /data)": a process as a message shows it. */
export function describeProcess(info: ProcessInfo): string {
  return `pid ${info.pid} (${info.command})`;
}

async function allPids(): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  return entries.filter((e) => /^\d+$/.test(e)).map(Number);
}

/** A listening TCP socket as /proc/net/tcp and tcp6 show it. */
export interface ListeningSocket {
  /** The local address in its usual text form: `127.0.0.1`, `0.0.0.0`, `::`, `::1`. */
  address: string;
  port: number;
  inode: string;
}

/** /proc's hex address: 32-bit words, each in the host's (little-endian) byte order. */
function procAddress(hex: string): string {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) => (word.match(/../g) ?? []).reverse());
  const octets = bytes.map((b) => parseInt(b, 16));
  if (octets.length === 4) return octets.join('.');
  const groups = Array.from({ length: 8 }, (_, i) =>
    ((octets[2 * i]! << 8) | octets[2 * i + 1]!).toString(16),
  );
  // The longest run of zero groups becomes `::`, as the address is usually written.
  const text = groups.join(':');
  const runs = text.match(/(?:^|:)0(?::0)+(?::|$)/g) ?? [];
  const longest = runs.reduce((a, b) => (b.length > a.length ? b : a), '');
  return longest ? text.replace(longest, '::') : text;
}

/** Every TCP socket in the LISTEN state, IPv4 and IPv6. */
export async function listeningSockets(): Promise<ListeningSocket[]> {
  const sockets: ListeningSocket[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; column 9 is the inode.
      const [address, port] = cols[1]?.split(':') ?? [];
      if (address && port && cols[3] === '0A' && cols[9] && cols[9] !== '0') {
        sockets.push({ address: procAddress(address), port: parseInt(port, 16), inode: cols[9] });
      }
    }
  }
  return sockets;
}

/** Inodes of the TCP sockets listening on `port`. */
async function listeningInodes(port: number): Promise<Set<string>> {
  return new Set((await listeningSockets()).filter((s) => s.port === port).map((s) => s.inode));
}

/** Inodes of the sockets a process holds open (`socket:[inode]` links in /proc/pid/fd). */
export async function socketInodesOf(pid: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
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
  for (const pid of await allPids()) {
    const held = await socketInodesOf(pid);
    if (![...inodes].some((inode) => held.has(inode))) continue;
    const info = await liveProcess(pid);
    if (info) return info;
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
