/**
 * The chaos suite's world: the fault suite's PostgreSQL and Temporal dev server (both killable
 * with SIGKILL), two gateways and two workers started as production starts them, the webhook
 * receiver as a process of its own, a seeded random source, and the load: turns (text, a crop,
 * a crop in plan mode) and direct tool calls, sent by clients that behave as a careful client
 * does when a gateway dies under them.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Pool } from 'pg';
import { freePort } from '../../testkit/stack';
import type { MinioServer } from '../support/minio';
import { waitFor } from '../support/wait';
import {
  processTree,
  startGateway,
  startWorker,
  type Account,
  type AppProcess,
  type Gateway,
} from '../faults/support';
import type { OpenPost, ReceiverLine } from './receiver';

const ROOT = path.resolve(__dirname, '../..');

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seeded(seed: number): { next(): number; int(min: number, max: number): number } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}

export interface Receiver {
  url: string;
  /** Every line the receiver wrote, across its restarts. */
  lines(): ReceiverLine[];
  /** The POSTs it has read and not answered; none while it is down. */
  open(): Promise<OpenPost[]>;
  /** Holds every POST that arrives from now on, until `release` (see receiver.ts). */
  hold(): Promise<void>;
  release(): Promise<void>;
  kill(): Promise<void>;
  start(): Promise<void>;
}

export async function startReceiverProcess(logFile: string, seed: number): Promise<Receiver> {
  const port = await freePort();
  let proc: AppProcess | undefined;
  const start = async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/chaos/receiver.ts', String(port), logFile, String(seed)],
      { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const started = processTree(child, 'receiver', 30_000);
    proc = started;
    await started.waitForLine(/receiver listening/);
  };
  await start();
  const control = (method: string, path: string) =>
    fetch(`http://127.0.0.1:${port}${path}`, { method, signal: AbortSignal.timeout(2_000) });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    open: () =>
      control('GET', '/open').then(
        (res) => res.json() as Promise<OpenPost[]>,
        () => [],
      ),
    hold: () =>
      control('POST', '/hold').then(
        () => undefined,
        () => undefined,
      ),
    release: () =>
      control('POST', '/release').then(
        () => undefined,
        () => undefined,
      ),
    lines: () =>
      existsSync(logFile)
        ? readFileSync(logFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as ReceiverLine)
        : [],
    kill: async () => proc?.kill(),
    start,
  };
}

/** The operator port a worker logged in its `worker running` line. */
function workerHttpPort(worker: AppProcess): number | undefined {
  for (const line of worker.output().split('\n')) {
    if (!line.includes('worker running')) continue;
    try {
      const port = (JSON.parse(line) as { httpPort?: unknown }).httpPort;
      if (typeof port === 'number') return port;
    } catch {
      // Not a log line of ours (npm's own output).
    }
  }
  return undefined;
}

/** The activity and local-activity task slots in use, summed from a Prometheus text answer. */
export function activitySlotsUsed(metrics: string): number {
  let used = 0;
  for (const [, labels, value] of metrics.matchAll(/^temporal_worker_task_slots_used\{([^}]*)\} (\S+)$/gm))
    if (/worker_type="(?:Activity|LocalActivity)Worker"/.test(labels ?? '')) used += Number(value);
  return used;
}

/** The application name an app process connects to PostgreSQL with (PGAPPNAME; moments.ts reads it). */
export const appName = (app: 'gateway' | 'worker', i: number): string => `${app}-${i}`;

/** Two gateways and two workers, each replaceable (killed, started again, with extra settings). */
export class Topology {
  gateways: (Gateway | undefined)[] = [undefined, undefined];
  workers: (AppProcess | undefined)[] = [undefined, undefined];
  /** Requests in flight per gateway URL: a gateway killed while one is open hit live work. */
  readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  /**
   * True at the next request opened on `url` (false after `timeoutMs`): the caller's continuation
   * runs while that request is still open, so a kill it makes lands on live work.
   */
  nextRequest(url: string, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.set(
          url,
          (this.waiting.get(url) ?? []).filter((w) => w !== wake),
        );
        resolve(false);
      }, timeoutMs);
      this.waiting.set(url, [...(this.waiting.get(url) ?? []), wake]);
    });
  }

  /** Counts a request opened on `url` and wakes whoever waits for one. */
  opened(url: string): void {
    this.inFlight.set(url, (this.inFlight.get(url) ?? 0) + 1);
    const waiters = this.waiting.get(url) ?? [];
    this.waiting.delete(url);
    for (const wake of waiters) wake();
  }

  constructor(readonly env: Record<string, string>) {}

  async start(): Promise<void> {
    await Promise.all([0, 1].map((i) => this.startGateway(i)));
    await Promise.all([0, 1].map((i) => this.startWorker(i)));
  }

  /** Gateway `i`, its connections to PostgreSQL named `gateway-<i>` (moments.ts reads them). */
  async startGateway(i: number, extra: Record<string, string> = {}): Promise<Gateway> {
    const gateway = await startGateway({ ...this.env, ...extra, PGAPPNAME: appName('gateway', i) });
    this.gateways[i] = gateway;
    return gateway;
  }

  async startWorker(i: number, extra: Record<string, string> = {}): Promise<AppProcess> {
    const worker = await startWorker({ ...this.env, ...extra, PGAPPNAME: appName('worker', i) });
    this.workers[i] = worker;
    return worker;
  }

  async killGateway(i: number): Promise<number> {
    const gateway = this.gateways[i];
    this.gateways[i] = undefined;
    const open = gateway ? (this.inFlight.get(gateway.url) ?? 0) : 0;
    await gateway?.process.kill('SIGKILL');
    return open;
  }

  /**
   * The activities (local ones too) worker `i` is running now, from its own /metrics (the Temporal
   * SDK's task-slot gauge): a kill of that worker then lands on its work, not merely while the
   * other worker was busy. 0 when it is down or does not answer.
   */
  async activitiesRunning(i: number): Promise<number> {
    const port = this.workers[i] && workerHttpPort(this.workers[i]);
    if (!port) return 0;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) });
      return activitySlotsUsed(await res.text());
    } catch {
      return 0;
    }
  }

  async killWorker(i: number): Promise<void> {
    const worker = this.workers[i];
    this.workers[i] = undefined;
    await worker?.kill('SIGKILL');
  }

  /** A gateway or worker that ended without the suite killing it, told with its output; else undefined. */
  endedUnasked(): string | undefined {
    for (const p of [...this.gateways.map((g) => g?.process), ...this.workers]) {
      const ended = p?.endedUnasked();
      if (ended) return ended;
    }
    return undefined;
  }

  /** A live gateway's URL, the one at `prefer` when it is up. */
  url(prefer: number): string | undefined {
    return (this.gateways[prefer] ?? this.gateways.find(Boolean))?.url;
  }

  async stop(): Promise<void> {
    for (const g of this.gateways) await g?.process.kill('SIGKILL');
    for (const w of this.workers) await w?.kill('SIGKILL');
  }
}

export type Kind = 'text' | 'tool' | 'plan' | 'direct';

/** One thing a client asked for, found in the database by the marker its text or URL carries. */
export interface Request {
  marker: string;
  kind: Kind;
  /** The Idempotency-Key every send of it carries. */
  key: string;
  /** Each answer the client got, in order: the HTTP status (0: none, the connection died) and whether it was a replay. */
  answers: { status: number; replayed: boolean }[];
  /** What the answer it accepted named: a turn's run, a call's provider run. */
  runId?: string;
  providerRunId?: string;
  /** A send or call the client gave up on (an answer it cannot retry). */
  refused?: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The load's requests are spread over at least this long: a few (CI's eight) sent at once would be
 * done before a fault's random moment (0.5–3 s on) more often than not, and the fault would hit
 * nothing. A large load is slower than this pace and is not held back by it.
 */
const LOAD_SPREAD_MS = 6_000;

/**
 * Sends every request, a few at a time and no faster than LOAD_SPREAD_MS allows, each through a
 * gateway picked by the seed, as the README asks a client to: every send carries the request's
 * Idempotency-Key, and one that got no answer (its connection died), a 5xx, a 429 or
 * `409 IDEMPOTENCY_IN_PROGRESS` (the key still held by a request whose gateway died, until its
 * lease ends) is sent again with the same key until it gets an answer. The client never looks into
 * the service's database: a retry the service runs twice shows as a second run or call of the
 * request's marker.
 */
export async function drive(input: {
  topology: Topology;
  account: Account;
  requests: Request[];
  imageUrl: string;
  random: ReturnType<typeof seeded>;
  deadline: number;
}): Promise<void> {
  const { topology, account, requests, imageUrl, random } = input;
  const began = Date.now();
  const queue = requests.map((r, i) => ({ r, notBefore: began + (i * LOAD_SPREAD_MS) / requests.length }));
  const one = async (r: Request) => {
    const [path, body] =
      r.kind === 'direct'
        ? [
            '/api/v1/tools/crop_image',
            { image_url: directUrl(imageUrl, r), x: 0, y: 0, width: 16, height: 16 },
          ]
        : ['/api/v1/completions', turnBody(r, imageUrl)];
    while (Date.now() < input.deadline) {
      // A process that died of itself is the finding: the load must not spin on it until the deadline.
      const ended = topology.endedUnasked();
      if (ended) throw new Error(ended);
      const url = topology.url(random.int(0, 1));
      if (!url) {
        await pause(200);
        continue;
      }
      topology.opened(url);
      let status = 0;
      let replayed = false;
      let text = '';
      try {
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { ...account.bearer, 'content-type': 'application/json', 'idempotency-key': r.key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(120_000),
        });
        status = res.status;
        replayed = res.headers.get('idempotent-replayed') === 'true';
        text = await res.text();
      } catch {
        status = 0;
      } finally {
        topology.inFlight.set(url, (topology.inFlight.get(url) ?? 1) - 1);
      }
      r.answers.push({ status, replayed });
      if (status === 202 || status === 200) {
        const answer = JSON.parse(text) as { runId?: string; providerRunId?: string };
        r.runId = answer.runId;
        r.providerRunId = answer.providerRunId;
        return;
      }
      if (status === 0 || status >= 500 || status === 429 || errorCode(text) === 'IDEMPOTENCY_IN_PROGRESS') {
        await pause(status === 0 ? 100 : 300);
        continue;
      }
      r.refused = `${status} ${text.slice(0, 200)}`;
      return;
    }
    r.refused = 'not answered before the deadline';
  };
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        await pause(Math.max(0, next.notBefore - Date.now()));
        await one(next.r);
      }
    }),
  );
}

/** The `code` of an error answer's body; undefined when it is not one of ours. */
function errorCode(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { code?: string }).code;
  } catch {
    return undefined;
  }
}

export function directUrl(imageUrl: string, r: Request): string {
  return `${imageUrl}?m=${r.marker}`;
}

function turnBody(r: Request, imageUrl: string): Record<string, unknown> {
  if (r.kind === 'text') return { text: `hello ${r.marker}` };
  return {
    text: `crop this to the left half ${r.marker}`,
    image_urls: [imageUrl],
    planMode: r.kind === 'plan',
  };
}

/** How long an approval may go unanswered before the loop gives up on it and asks again. */
const APPROVAL_ANSWER_MS = 30_000;

/**
 * Approves each pending plan of the user through a live gateway, until stopped. `lastAnswer` says
 * what a run's last approval got (a status and body, or no answer), so a run left WAITING names why.
 */
export function approvePlans(
  topology: Topology,
  account: Account,
  pool: Pool,
): { stop(): Promise<void>; lastAnswer(runId: string): string | undefined } {
  let running = true;
  const approved = new Set<string>();
  const answers = new Map<string, string>();
  const loop = (async () => {
    while (running) {
      try {
        const { rows } = await pool.query<{ id: string; runId: string; chatId: string }>(
          `SELECT w.id, w."runId", r."chatId" FROM "Waitpoint" w JOIN "Run" r ON r.id = w."runId"
            WHERE w.status = 'PENDING'`,
        );
        for (const w of rows.filter((r) => !approved.has(r.id))) {
          const url = topology.url(0);
          if (!url) break;
          const answer = await fetch(
            `${url}/api/v1/chats/${w.chatId}/runs/${w.runId}/waitpoints/${w.id}/complete`,
            {
              method: 'POST',
              headers: { ...account.bearer, 'content-type': 'application/json' },
              body: JSON.stringify({ approved: true }),
              signal: AbortSignal.timeout(APPROVAL_ANSWER_MS),
            },
          ).then(
            async (res) => ({ status: res.status, body: await res.text() }),
            (err: Error) => ({ status: 0, body: `${err.name}: ${err.message}` }),
          );
          if (answer.status === 202) approved.add(w.id);
          answers.set(w.runId, `${url}: ${answer.status} ${answer.body.slice(0, 300)}`);
        }
      } catch {
        // PostgreSQL is down, or an answer broke off: the next round asks again.
      }
      await pause(200);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
    lastAnswer: (runId) => answers.get(runId),
  };
}

/** Files under local storage that no finished tool call or upload owns: tmp leftovers, objects of failed calls. */
export async function orphanFiles(storageDir: string, pool: Pool): Promise<string[]> {
  const orphans: string[] = [];
  const tmp = path.join(storageDir, 'tmp');
  if (existsSync(tmp)) orphans.push(...(await readdir(tmp)).map((f) => `tmp/${f}`));
  const tools = path.join(storageDir, 'objects', 'tools');
  if (!existsSync(tools)) return orphans;
  const { rows } = await pool.query<{ id: string }>(`SELECT id FROM "ToolCall" WHERE status = 'SUCCEEDED'`);
  const succeeded = new Set(rows.map((r) => r.id));
  for (const user of await readdir(tools)) {
    for (const call of await readdir(path.join(tools, user))) {
      if (!succeeded.has(call)) orphans.push(`objects/tools/${user}/${call}`);
    }
  }
  return orphans;
}

/** Objects under tools/ in the bucket that no finished tool call owns (S3 puts leave no temporary files). */
export async function orphanObjects(minio: MinioServer, pool: Pool): Promise<string[]> {
  const client = new S3Client({
    endpoint: minio.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
  try {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: minio.bucket, Prefix: 'tools/', ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
      token = page.NextContinuationToken;
    } while (token);
    const { rows } = await pool.query<{ id: string }>(`SELECT id FROM "ToolCall" WHERE status = 'SUCCEEDED'`);
    const succeeded = new Set(rows.map((r) => r.id));
    // tools/<userId>/<toolCallId>/<file>
    return keys.filter((key) => !succeeded.has(key.split('/')[2] ?? ''));
  } finally {
    client.destroy();
  }
}

export { waitFor };
