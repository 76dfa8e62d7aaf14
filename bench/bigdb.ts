/**
 * The big-database rows (issue 50): each hot route as the heavy user of a generated database a
 * year old (bench/generate.ts: 50,000 chats, a chat of 10,000 messages, a year of deliveries)
 * calls it, against the same route as a light user of an empty database calls it (15 chats, one of
 * 80 messages, a few dozen deliveries, written by the service's own turns): paired, in alternating
 * slices, on two gateways and two workers alike in all but their database, on the same servers.
 * Each row is measured REPETITIONS times; the row shows the median of their p50s and p99s, with
 * the p50s' spread, and its ratio is big ÷ empty of those medians. The reconciler does not run
 * during the rows (its retention would be working off the generated year's backlog); its prune of
 * stream events, the statement finding 2 was about, has a row of its own, at rest.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createDatabase, type Database } from '../core/db/client';
import { migrate } from '../core/db/migrator';
import { pruneRunEvents } from '../core/runs/store';
import { encodeCursor } from '../core/schemas/common';
import { startGateway, type TestGateway } from '../testkit/gateway';
import { createTestUser, type TestUser } from '../testkit/users';
import { startWorker, type TestWorker } from '../testkit/worker';
import { isTerminal, serviceClient, type ServiceClient } from './client';
import type { Bench } from './context';
import {
  COMMON_TITLE_WORD,
  HEAVY_USER_ID,
  LONG_CHAT_ID,
  WORDS,
  generateDatabase,
  generatedId,
  type Generated,
} from './generate';
import { quantile, recorder, type Figures } from './measure';
import { fmt, markdownTable, type Row } from './report';

const MAX_RATIO = 1.3;
const REPETITIONS = Number(process.env.BENCH_BIGDB_REPETITIONS ?? 3);
const SAMPLES = Number(process.env.BENCH_BIGDB_SAMPLES ?? 100);
/** Sends into the long chat wait for each turn's end, untimed: fewer of them. */
const LONG_CHAT_SENDS = Number(process.env.BENCH_BIGDB_LONG_SENDS ?? 30);
/** The light user's chats, and the turns of its longest: an ordinary account. */
const LIGHT_CHATS = 15;
const LIGHT_LONG_TURNS = 40;

interface RunRef {
  chatId: string;
  runId: string;
}

/** One database's gateway, worker and user, and what the rows ask of it. */
interface Side {
  db: Database;
  gateway: TestGateway;
  worker: TestWorker;
  user: TestUser;
  client: ServiceClient;
  mcp: McpClient;
  /** The chat the long-chat sends go to and whose messages are paged. */
  longChat: string;
  endpointId: string;
  /** The chat list at half its depth. */
  deepCursor: string;
  close(): Promise<void>;
}

/** A measured operation: answers its own latency in ms (what it does untimed is its business). */
type Op = () => Promise<number>;

const timed = async (work: () => Promise<void>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

/** `big` and `empty`, n times each, in alternating slices (measurePair's order), latencies pooled per side. */
async function pair(big: Op, empty: Op, n: number, slices = 4): Promise<{ big: Figures; empty: Figures }> {
  const sides = [
    { op: big, rec: recorder(), ms: 0 },
    { op: empty, rec: recorder(), ms: 0 },
  ];
  const per = Math.ceil(n / slices);
  for (let slice = 0; slice < slices; slice++) {
    for (const side of slice % 2 === 0 ? sides : [...sides].reverse()) {
      const started = performance.now();
      for (let i = 0; i < per; i++) {
        try {
          side.rec.add(await side.op());
        } catch (err) {
          side.rec.fail(err);
        }
      }
      side.ms += performance.now() - started;
    }
  }
  const [b, e] = sides as [(typeof sides)[0], (typeof sides)[0]];
  return { big: b.rec.figures(b.ms, 1), empty: e.rec.figures(e.ms, 1) };
}

async function startSide(
  bench: Bench,
  url: string,
  name: string,
): Promise<Omit<Side, 'user' | 'client' | 'mcp' | 'longChat' | 'endpointId' | 'deepCursor'>> {
  const db = createDatabase({ url, poolSize: 10 });
  const config = bench.stack.config({
    ...bench.env,
    DATABASE_URL: url,
    TEMPORAL_TASK_QUEUE: `bench-${name}-${randomUUID().slice(0, 8)}`,
  });
  const worker = await startWorker({ config, deps: { db } });
  const gateway = await startGateway({ config, deps: { db } });
  return {
    db,
    gateway,
    worker,
    async close() {
      await gateway.close();
      await worker.stop();
      await db.close();
    },
  };
}

async function connectMcp(gateway: TestGateway, user: TestUser): Promise<McpClient> {
  const mcp = new McpClient({ name: 'bench', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${user.apiKey}` } },
    }),
  );
  return mcp;
}

async function cursorAt(db: Database, userId: string, offset: number): Promise<string> {
  const { rows } = await db.pool.query<{ at: Date; id: string }>(
    `SELECT "activityAt" AS at, id FROM "Chat" WHERE "userId" = $1 AND "deletedAt" IS NULL
      ORDER BY "activityAt" DESC, id DESC OFFSET $2 LIMIT 1`,
    [userId, offset],
  );
  if (!rows[0]) throw new Error(`bench: no chat at offset ${offset}`);
  return encodeCursor(rows[0]);
}

/** The heavy user of the generated database, with a key and a session of the bench's. */
async function bigSide(bench: Bench, url: string): Promise<Side> {
  const side = await startSide(bench, url, 'big');
  const user = await createTestUser({ pool: side.db.pool, userId: HEAVY_USER_ID });
  const { rows } = await side.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "Chat" WHERE "userId" = $1`,
    [HEAVY_USER_ID],
  );
  return {
    ...side,
    user,
    client: serviceClient(side.gateway.url, user),
    mcp: await connectMcp(side.gateway, user),
    longChat: LONG_CHAT_ID,
    endpointId: generatedId('endpoint:0'),
    deepCursor: await cursorAt(side.db, HEAVY_USER_ID, Math.floor(Number(rows[0]?.n) / 2)),
  };
}

/**
 * A light user of an empty database, whose chats, messages and deliveries the service writes: 15
 * chats (two favourites), one of them 40 turns long (four of them crops), every ending delivered
 * to a loopback receiver; then its endpoint is paused, as the heavy user's is, so no turn of the
 * rows delivers anything.
 */
async function emptySide(bench: Bench, url: string, receiverUrl: string): Promise<Side> {
  const side = await startSide(bench, url, 'empty');
  const user = await createTestUser({ pool: side.db.pool });
  const client = serviceClient(side.gateway.url, user);
  await client.addWebhook(receiverUrl, ['agent.completed', 'agent.failed', 'tool.completed']);
  const turn = async (body: object) => {
    const sent = await client.send(body);
    await client.pollUntil(sent, isTerminal, 20);
    return sent;
  };
  // Texts of the generated ones' length and words, so a page of messages weighs about the same;
  // its chats' titles (their first texts') all hold the searched word, so its search answers a
  // page of them, as the heavy user's does.
  const words = (i: number) =>
    Array.from({ length: 30 }, (_, w) => WORDS[(i * 31 + w * 7) % WORDS.length]).join(' ');
  const chats: string[] = [];
  for (let i = 0; i < LIGHT_CHATS - 1; i++)
    chats.push((await turn({ text: `${COMMON_TITLE_WORD} ${words(i)}` })).chatId);
  const longChat = (await turn({ text: `${COMMON_TITLE_WORD} ${words(LIGHT_CHATS)}` })).chatId;
  // One turn in ten crops an image, as in the generated chats: a page of messages carries tool
  // calls and their images (attachments, with signed URLs) on both sides.
  for (let i = 1; i < LIGHT_LONG_TURNS; i++)
    await turn(
      i % 10 === 5
        ? { text: 'crop this to the left half', image_urls: [bench.image.url], chatId: longChat }
        : { text: words(LIGHT_CHATS + i), chatId: longChat },
    );
  for (const chatId of chats.slice(0, 2)) {
    const res = await fetch(`${side.gateway.url}/api/v1/chats/${chatId}`, {
      method: 'PATCH',
      headers: client.headers,
      body: JSON.stringify({ isFavorite: true }),
    });
    if (res.status !== 200) throw new Error(`favourite ${res.status}`);
  }
  const { rows } = await side.db.pool.query<{ id: string }>(
    `SELECT id FROM "WebhookEndpoint" WHERE "userId" = $1`,
    [user.userId],
  );
  const endpointId = rows[0]?.id ?? '';
  for (;;) {
    const pending = await side.db.pool.query(
      `SELECT 1 FROM "WebhookDelivery" WHERE "endpointId" = $1 AND status = 'PENDING' LIMIT 1`,
      [endpointId],
    );
    if (!pending.rowCount) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await side.db.pool.query(`UPDATE "WebhookEndpoint" SET "isActive" = false WHERE id = $1`, [endpointId]);
  return {
    ...side,
    user,
    client,
    mcp: await connectMcp(side.gateway, user),
    longChat,
    endpointId,
    deepCursor: await cursorAt(side.db, user.userId, Math.floor(LIGHT_CHATS / 2)),
  };
}

/** A GET answered 200, its body read. */
const get =
  (side: Side, path: string, headers: Record<string, string> = side.user.bearer): Op =>
  () =>
    timed(async () => {
      const res = await fetch(`${side.gateway.url}${path}`, { headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
    });

/** The latest run of the side's long chat. */
async function lastRun(side: Side): Promise<RunRef> {
  const { rows } = await side.db.pool.query<{ id: string }>(
    `SELECT id FROM "Run" WHERE "chatId" = $1 ORDER BY "createdAt" DESC LIMIT 1`,
    [side.longChat],
  );
  return { chatId: side.longChat, runId: rows[0]?.id ?? '' };
}

/**
 * A poll the gateway answers by reading the tables: each is preceded by the run's notification
 * (what every write of it sends; the run itself stays as it is) and waits until the gateway has let
 * its remembered answer go (bench/snapshot.ts, "after a change").
 */
function pollAfterChange(side: Side, run: RunRef): Op {
  const caller = side.gateway.ops.identity.rememberedCaller(side.user.apiKey, 'rest');
  return async () => {
    await side.db.pool.query(`SELECT pg_notify('run_events', $1)`, [run.runId]);
    const remembered = caller ?? side.gateway.ops.identity.rememberedCaller(side.user.apiKey, 'rest');
    while (remembered && side.gateway.ops.runs.unchangedRun(remembered, run) !== undefined)
      await new Promise((resolve) => setImmediate(resolve));
    return get(side, `/api/v1/chats/${run.chatId}/runs/${run.runId}`)();
  };
}

/** Opens the run's live stream and answers the time to its first event (the snapshot). */
function streamFirstEvent(side: Side, run: RunRef): Op {
  return async () => {
    const stop = new AbortController();
    const started = performance.now();
    try {
      const res = await fetch(`${side.gateway.url}/api/v1/chats/${run.chatId}/runs/${run.runId}/events`, {
        headers: side.user.bearer,
        signal: stop.signal,
      });
      if (res.status !== 200 || !res.body) throw new Error(`stream ${res.status}`);
      const reader = res.body.getReader();
      let seen = '';
      while (!seen.includes('\n\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      if (!seen.includes('event: snapshot')) throw new Error(`stream began with ${seen.slice(0, 80)}`);
      return performance.now() - started;
    } finally {
      stop.abort();
    }
  };
}

interface RowSpec {
  name: string;
  op(side: Side): Op | Promise<Op>;
  samples?: number;
  /** A bound on the big database's p50 in ms, instead of the ratio's. */
  maxMs?: number;
}

/** The rows: each route, the heavy user on the big database against the light user on the empty one. */
function rowSpecs(bench: Bench): RowSpec[] {
  const chats = (q: string) => (s: Side) => get(s, `/api/v1/chats?limit=20${q}`);
  return [
    {
      name: 'send, new chat',
      op: (s) => () => timed(async () => void (await s.client.send({ text: 'hello bench' }))),
    },
    {
      name: 'send, the long chat (admission)',
      samples: LONG_CHAT_SENDS,
      op: (s) => async () => {
        let sent: RunRef | undefined;
        const ms = await timed(async () => {
          sent = await s.client.send({ text: 'hello again', chatId: s.longChat });
        });
        // The turn ends before the next send into the chat (untimed).
        if (sent) await s.client.pollUntil(sent, isTerminal, 20);
        return ms;
      },
    },
    {
      name: 'poll, a running run',
      op: async (s) => {
        const waiting = await s.client.send({
          text: 'crop this to the left half',
          image_urls: [bench.image.url],
          planMode: true,
        });
        await s.client.pollUntil(waiting, (r) => r.status === 'WAITING' || isTerminal(r), 50);
        return pollAfterChange(s, waiting);
      },
    },
    { name: 'poll, a finished run', op: async (s) => pollAfterChange(s, await lastRun(s)) },
    { name: 'list chats, first page', op: chats('') },
    { name: 'list chats, deep cursor', op: (s) => chats(`&cursor=${s.deepCursor}`)(s) },
    { name: 'title search, no match', op: chats('&q=zqxj') },
    { name: `title search, a word in 1 % of titles`, op: chats(`&q=${COMMON_TITLE_WORD}`) },
    { name: 'favourites', op: chats('&favorite=true') },
    { name: 'messages, first page', op: (s) => get(s, `/api/v1/chats/${s.longChat}/messages?limit=50`) },
    {
      name: 'messages, last page',
      op: (s) => get(s, `/api/v1/chats/${s.longChat}/messages?limit=50&order=desc`),
    },
    {
      name: 'deliveries of an endpoint',
      op: (s) =>
        get(s, `/api/webhook-endpoints/${s.endpointId}/deliveries?limit=50`, { cookie: s.user.cookie }),
    },
    { name: 'open a stream (first event)', op: async (s) => streamFirstEvent(s, await lastRun(s)) },
    {
      name: 'mcp list_chats',
      op: (s) => () =>
        timed(async () => {
          const result = await s.mcp.callTool({ name: 'list_chats', arguments: {} });
          if (result.isError) throw new Error(JSON.stringify(result.structuredContent));
        }),
    },
    {
      // The reconciler's prune of stream events (finding 2) at rest: what was past its time
      // deleted, and vacuumed as autovacuum would, so the pass finds nothing to do. Its bound is
      // absolute: both sides read next to nothing (test/db/plans.test.ts), and what is left is a
      // round trip and a plan; the statement it replaces read the whole Run table every pass.
      name: 'prune of run events, at rest',
      maxMs: 5,
      op: async (s) => {
        const retention = s.gateway.deps.config.RUN_EVENTS_RETENTION;
        while ((await pruneRunEvents(s.db.pool, retention, 1000)) > 0);
        await s.db.pool.query('VACUUM (ANALYZE) "RunEvent"');
        return () => timed(async () => void (await pruneRunEvents(s.db.pool, retention, 1000)));
      },
    },
  ];
}

const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/** The rows' figures: median p50 and p99 over the repetitions, and the p50s' spread. */
function bigDbRow(name: string, reps: { big: Figures; empty: Figures }[], maxMs?: number): Row {
  const side = (pick: (r: { big: Figures; empty: Figures }) => Figures) => {
    const p50s = reps.map((r) => pick(r).p50);
    return {
      p50: median(p50s),
      p99: median(reps.map((r) => pick(r).p99)),
      min: Math.min(...p50s),
      max: Math.max(...p50s),
      errors: reps.reduce((n, r) => n + pick(r).errors, 0),
      n: reps.reduce((n, r) => n + pick(r).n, 0),
    };
  };
  const big = side((r) => r.big);
  const empty = side((r) => r.empty);
  const shown = (s: typeof big) =>
    `${fmt(s.p50, 2)} (${fmt(s.p99, 2)}) [${fmt(s.min, 2)}–${fmt(s.max, 2)}]${s.errors ? `, ${s.errors} errors` : ''}`;
  const r50 = big.p50 / empty.p50;
  const r99 = big.p99 / empty.p99;
  return {
    key: 'bigdb',
    name: `big db: ${name}`,
    measure: `median of ${reps.length}: p50 (p99) [p50 spread] ms, n=${big.n}`,
    service: shown(big),
    baseline: shown(empty),
    ratio: `${fmt(r50, 2)}x (${fmt(r99, 2)}x)`,
    target: maxMs === undefined ? `p50 ≤${MAX_RATIO}x` : `p50 ≤${maxMs} ms`,
    meets: (maxMs === undefined ? r50 <= MAX_RATIO : big.p50 <= maxMs) && !big.errors && !empty.errors,
    data: { big, empty, ratioP50: r50, ratioP99: r99, repetitions: reps },
  };
}

/** The generated database's figures: what was written, how big, how long it took. */
function generationTable(generated: Generated): { title: string; markdown: string } {
  const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
  return {
    title: `Generated database (scale ${generated.scale}): ${mib(generated.databaseBytes)} MiB in ${generated.seconds.toFixed(0)} s`,
    markdown: markdownTable(
      ['table', 'rows', 'MiB (indexes)'],
      generated.tables.map((t) => [
        t.table,
        t.rows.toLocaleString('en'),
        `${mib(t.bytes)} (${mib(t.indexBytes)})`,
      ]),
    ),
  };
}

export async function bigDbRows(
  bench: Bench,
): Promise<{ rows: Row[]; tables: { title: string; markdown: string }[]; data: Record<string, unknown> }> {
  const tables: { title: string; markdown: string }[] = [];
  const data: Record<string, unknown> = {};
  let bigUrl = process.env.BENCH_BIGDB_URL;
  if (bigUrl) {
    console.log('bench: big db: the database of BENCH_BIGDB_URL, generated before');
    data.bigdbReused = true;
  } else {
    const scale = Number(process.env.BENCH_BIGDB_SCALE ?? 1);
    console.log(`bench: big db: generating at scale ${scale}…`);
    bigUrl = await bench.stack.createDatabase('bigdb');
    const generated = await generateDatabase(bigUrl, scale, (line) => console.log(`bench:   ${line}`));
    tables.push(generationTable(generated));
    data.bigdbGenerated = generated;
  }
  const emptyUrl = await bench.stack.createDatabase('emptydb');
  await migrate(emptyUrl);

  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const opened: Side[] = [];
  try {
    console.log('bench: big db: the light user writes its chats on the empty database…');
    const empty = await emptySide(bench, emptyUrl, receiverUrl);
    opened.push(empty);
    const big = await bigSide(bench, bigUrl);
    opened.push(big);
    const rows: Row[] = [];
    for (const spec of rowSpecs(bench)) {
      const n = spec.samples ?? SAMPLES;
      console.log(`bench: big db: ${spec.name}, ${n} each side × ${REPETITIONS}…`);
      const ops = { big: await spec.op(big), empty: await spec.op(empty) };
      // Warm both sides' paths (plans cached, pools grown) uncounted.
      await pair(ops.big, ops.empty, Math.min(n, 20), 2);
      const reps = [];
      for (let r = 0; r < REPETITIONS; r++) reps.push(await pair(ops.big, ops.empty, n));
      rows.push(bigDbRow(spec.name, reps, spec.maxMs));
    }
    return { rows, tables, data };
  } finally {
    for (const side of opened) {
      await side.mcp.close().catch(() => undefined);
      await side.close();
    }
    receiver.closeAllConnections();
    receiver.close();
  }
}
