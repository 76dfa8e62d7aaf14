/**
 * The moments a fault can interrupt, and how the chaos suite reads which of them were in flight
 * when it struck: an activity running on a worker (its task slots, from the worker's own
 * /metrics), a POST open at the receiver (the receiver lists them, with the sender's port, which
 * tells the worker that sent it), a statement of the service open in PostgreSQL (pg_stat_activity,
 * by the application name each app process connects with), a client's request open at a gateway.
 * To aim a fault at a moment that lasts milliseconds, the suite holds it open: the receiver holds
 * the POSTs it gets, and a transaction of the suite's own locks the service's tables against
 * writes, so the next write waits inside PostgreSQL.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import type { Pool, PoolClient } from 'pg';
import { appName, type Receiver, type Topology } from './support';

export const MOMENTS = ['mid-activity', 'mid-POST', 'mid-transaction', 'mid-request'] as const;
export type Moment = (typeof MOMENTS)[number];

/** How many of each moment were in flight, of those the victim can interrupt. */
export type InFlight = Partial<Record<Moment, number>>;

/** What a fault strikes: one app process, or a piece of the infrastructure under all of them. */
export type Victim = { worker: number } | { gateway: number } | 'postgres' | 'temporal' | 'receiver';

export interface Probe {
  topology: Topology;
  pool: Pool;
  receiver: Receiver;
}

const APP_NAMES = /^(gateway|worker)-[0-9]+$/;

/** The TCP ports of every socket the process group `pgid` holds (its outbound connections among them). */
async function localPorts(pgid: number): Promise<Set<number>> {
  const inodes = new Set<string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // After the command's closing parenthesis: state, parent, process group.
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
    for (const fd of await readdir(`/proc/${entry}/fd`).catch(() => [])) {
      const socket = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${entry}/fd/${fd}`).catch(() => ''));
      if (socket?.[1]) inodes.add(socket[1]);
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1)) {
      const [, local, , , , , , , , inode] = line.trim().split(/\s+/);
      if (local && inode && inodes.has(inode)) ports.add(parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/** POSTs open at the receiver; only those the process group `pgid` sent, when given. */
async function openPosts(receiver: Receiver, pgid?: number): Promise<number> {
  const open = await receiver.open();
  if (open.length === 0 || pgid === undefined) return open.length;
  const ports = await localPorts(pgid);
  return open.filter((o) => ports.has(o.port)).length;
}

/**
 * Statements of the service open in PostgreSQL (a transaction begun and not idle), of the named
 * apps or of any; `waiting` counts only those waiting for a lock. 0 when PostgreSQL does not answer.
 */
async function openStatements(pool: Pool, apps: string[] | 'any', waiting = false): Promise<number> {
  const { rows } = await pool
    .query<{ n: number; app: string }>(
      `SELECT application_name AS app FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()
          AND xact_start IS NOT NULL AND state <> 'idle' ${waiting ? `AND wait_event_type = 'Lock'` : ''}`,
    )
    .catch(() => ({ rows: [] as { app: string }[] }));
  return rows.filter((r) => APP_NAMES.test(r.app) && (apps === 'any' || apps.includes(r.app))).length;
}

/** What of the victim's work is in flight now: the moments it can interrupt, each with a count. */
export async function inFlight(probe: Probe, victim: Victim): Promise<InFlight> {
  const { topology, pool, receiver } = probe;
  const anyActivity = async () =>
    (await Promise.all([0, 1].map((i) => topology.activitiesRunning(i)))).reduce((a, b) => a + b, 0);
  if (typeof victim === 'object' && 'worker' in victim) {
    const worker = topology.workers[victim.worker];
    const [activity, post, transaction] = await Promise.all([
      topology.activitiesRunning(victim.worker),
      worker ? openPosts(receiver, worker.pid) : 0,
      openStatements(pool, victimApps(victim)),
    ]);
    return { 'mid-activity': activity, 'mid-POST': post, 'mid-transaction': transaction };
  }
  if (typeof victim === 'object') {
    const url = topology.gateways[victim.gateway]?.url;
    return {
      'mid-request': url ? (topology.inFlight.get(url) ?? 0) : 0,
      'mid-transaction': await openStatements(pool, victimApps(victim)),
    };
  }
  if (victim === 'postgres') {
    const [transaction, activity, post] = await Promise.all([
      openStatements(pool, 'any'),
      anyActivity(),
      openPosts(receiver),
    ]);
    return { 'mid-transaction': transaction, 'mid-activity': activity, 'mid-POST': post };
  }
  if (victim === 'temporal') {
    const [activity, post] = await Promise.all([anyActivity(), openPosts(receiver)]);
    return { 'mid-activity': activity, 'mid-POST': post };
  }
  return { 'mid-POST': await openPosts(receiver) };
}

/** Moments in flight at all. */
export const anyInFlight = (seen: InFlight): boolean => Object.values(seen).some((n) => (n ?? 0) > 0);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Locks every table of the service against writes (EXCLUSIVE: reads go on), so the next write
 * of any app waits inside its statement until `unlock`. The lock gives up after half a second
 * rather than meet a transaction of the service in a deadlock; undefined then.
 */
async function lockWrites(pool: Pool): Promise<{ unlock(): Promise<void> } | undefined> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch {
    return undefined;
  }
  // PostgreSQL killed under the lock (its own scenario) ends this connection: no error to raise.
  client.on('error', () => undefined);
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL lock_timeout = '500ms'`);
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
        WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
    );
    await client.query(`LOCK TABLE ${rows.map((r) => r.name).join(', ')} IN EXCLUSIVE MODE`);
  } catch {
    client.release(true);
    return undefined;
  }
  return {
    async unlock() {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(true);
    },
  };
}

/** The application names of the victim's connections; any app's for the infrastructure. */
function victimApps(victim: Victim): string[] | 'any' {
  if (typeof victim !== 'object') return 'any';
  return 'worker' in victim ? [appName('worker', victim.worker)] : [appName('gateway', victim.gateway)];
}

/** How long one hold (of the receiver's POSTs, of the tables) waits for the victim before letting go. */
const HOLD_MS = 3_000;

/**
 * Waits, up to `timeoutMs`, until `moment` of the victim's work is in flight, holding it open where
 * it would pass too quickly to strike (a POST at the receiver, a statement in PostgreSQL). Returns
 * what was in flight (undefined: the moment never came) and `letGo`, to call once the fault has
 * struck: it ends the hold.
 */
export async function aimAt(
  probe: Probe,
  victim: Victim,
  moment: Moment,
  timeoutMs: number,
): Promise<{ seen: InFlight | undefined; letGo(): Promise<void> }> {
  const deadline = Date.now() + timeoutMs;
  const nothing = async () => undefined;
  if (moment === 'mid-request' && typeof victim === 'object' && 'gateway' in victim) {
    // A gateway's requests last milliseconds: the strike rides on the next one opened, while it is open.
    const url = probe.topology.gateways[victim.gateway]?.url;
    const opened = url ? await probe.topology.nextRequest(url, timeoutMs) : false;
    return { seen: opened ? await inFlight(probe, victim) : undefined, letGo: nothing };
  }
  while (Date.now() < deadline) {
    let letGo: () => Promise<void> = nothing;
    if (moment === 'mid-POST') {
      await probe.receiver.hold();
      letGo = () => probe.receiver.release();
    }
    if (moment === 'mid-transaction') {
      const lock = await lockWrites(probe.pool);
      if (!lock) {
        await pause(100);
        continue;
      }
      letGo = () => lock.unlock();
    }
    const holding = moment === 'mid-POST' || moment === 'mid-transaction';
    const holdEnds = holding ? Math.min(deadline, Date.now() + HOLD_MS) : deadline;
    while (Date.now() < holdEnds) {
      if (moment === 'mid-transaction') {
        // Held by the lock, not merely passing: the statement waits inside PostgreSQL.
        const waiting = await openStatements(probe.pool, victimApps(victim), true);
        if (waiting > 0) {
          const seen = await inFlight(probe, victim);
          return {
            seen: { ...seen, 'mid-transaction': Math.max(waiting, seen['mid-transaction'] ?? 0) },
            letGo,
          };
        }
      } else {
        const seen = await inFlight(probe, victim);
        if ((seen[moment] ?? 0) > 0) return { seen, letGo };
      }
      await pause(20);
    }
    await letGo();
    // Let what piled up behind the hold pass before holding again.
    await pause(300);
  }
  return { seen: undefined, letGo: nothing };
}
