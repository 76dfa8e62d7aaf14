import { readFileSync } from 'node:fs';

/** Open files kept for everything but streams: the pool's connections, requests, files; at most half the limit. */
const KEPT_FOR_THE_REST = 1024;

/**
 * This process's limit on open files (RLIMIT_NOFILE) as Linux tells it; undefined where /proc is
 * not there. Node raises its soft limit to the hard one as it starts, so the soft one here is the
 * hard one the process was given (by systemd's LimitNOFILE, the container runtime's `ulimit`).
 */
export function openFileLimit(limits = '/proc/self/limits'): { soft: number; hard: number } | undefined {
  let text: string;
  try {
    text = readFileSync(limits, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!match) return undefined;
  const value = (v: string) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v));
  return { soft: value(match[1]!), hard: value(match[2]!) };
}

/**
 * The streams and waits a gateway may hold with `limit` open files: each holds a socket, and the
 * rest of the process keeps KEPT_FOR_THE_REST (at most half), so that the stream past it is
 * refused rather than an unrelated request failing to accept its connection (EMFILE).
 */
export function streamCapacity(limit: number): number {
  return Math.max(1, Math.floor(limit - Math.min(KEPT_FOR_THE_REST, limit / 2)));
}
