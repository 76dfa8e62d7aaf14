/**
 * `npm run bench`: the service's hot paths against the bare work they cannot avoid, measured in the
 * same process and the same run. See bench/README.md for how to read the table.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import sharp from 'sharp';
import { DURABILITY_SETTING, embeddedPostgresDurable } from '../core/embedded/postgres';
import { createTemporalClient } from '../core/temporal/connection';
import { createTestUser } from '../testkit/users';
import { startGateway } from '../testkit/gateway';
import { testStack, stopTestStack } from '../testkit/stack';
import { startWorker } from '../testkit/worker';
import { measure, printTable, type Row } from './measure';
import { measureTurns } from './turns';

const N = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const SEQ = N('BENCH_SEQ', 200);
const CONC = N('BENCH_CONC', 400);
const POLLS = N('BENCH_POLLS', 1000);
const CROPS = N('BENCH_CROPS', 40);
/** BENCH_ROWS picks row groups, comma-separated; all of them by default. */
const ROW_GROUPS = ['crop', 'turns', 'snapshot', 'admission'];
const GROUPS = (process.env.BENCH_ROWS ?? ROW_GROUPS.join(','))
  .split(',')
  .map((g) => g.trim())
  .filter(Boolean);
const want = (group: string) => GROUPS.includes(group);

function ratio(row: Row, maxP50: number, maxP99?: number): Row {
  if (!row.service || !row.baseline) return row;
  row.ratioP50 = row.service.p50 / row.baseline.p50;
  row.ratioP99 = row.service.p99 / row.baseline.p99;
  row.meets =
    row.ratioP50 <= maxP50 && (maxP99 === undefined || row.ratioP99 <= maxP99) && !row.service.errors;
  return row;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function main(): Promise<void> {
  const started = Date.now();
  const unknown = GROUPS.filter((g) => !ROW_GROUPS.includes(g));
  if (unknown.length || !GROUPS.length) {
    throw new Error(`BENCH_ROWS: pick among ${ROW_GROUPS.join(', ')} (got "${process.env.BENCH_ROWS}")`);
  }
  // DATABASE_URL → the stack's PostgreSQL server (a fresh database is created on it); TEMPORAL_ADDRESS
  // is honoured by the test stack only through its own dev server, so the embedded one is the default.
  if (process.env.DATABASE_URL && !process.env.TEST_DATABASE_URL)
    process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
  // The rows that write (admission above all) cost what durable commits cost: say which were measured.
  const postgres = process.env.TEST_DATABASE_URL
    ? 'the server of DATABASE_URL / TEST_DATABASE_URL, with its own settings'
    : embeddedPostgresDurable()
      ? `embedded, durable (fsync and synchronous_commit on; ${DURABILITY_SETTING} unset or true)`
      : `embedded, NOT durable (${DURABILITY_SETTING}=false: fsync and synchronous_commit off)`;
  console.log(`bench: rows ${GROUPS.join(', ')}; PostgreSQL ${postgres}`);
  console.log('bench: starting stack (PostgreSQL + Temporal dev server)…');
  const stack = await testStack();
  const temporalAddress = process.env.TEMPORAL_ADDRESS ?? stack.temporalAddress;
  const storageDir = await mkdtemp(path.join(os.tmpdir(), 'bench-files-'));
  const common = {
    SEND_RATE_LIMIT_PER_MINUTE: '100000000',
    API_RATE_LIMIT_PER_MINUTE: '100000000',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    STORAGE_LOCAL_DIR: storageDir,
    MODEL_PROVIDER: 'local',
  };
  // Admission and snapshot: a queue no worker polls, so runs just queue.
  const idleQueue = `bench-idle-${randomBytes(4).toString('hex')}`;
  const gw = await startGateway({
    config: stack.config({ ...common, TEMPORAL_TASK_QUEUE: idleQueue }),
    temporalAddress,
  });
  const user = await createTestUser();
  const headers = { ...user.bearer, 'content-type': 'application/json' };

  const send = async () => {
    const res = await fetch(`${gw.url}/api/v1/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ text: 'hello bench' }),
    });
    const body = (await res.json()) as { chatId: string; runId: string };
    if (res.status !== 202) throw new Error(`admission ${res.status} ${JSON.stringify(body)}`);
    return body;
  };

  // Baseline: the same rows in a bare pg transaction, plus a bare workflow.start on an idle queue.
  const bare = createTemporalClient({ address: temporalAddress, namespace: 'default' });
  const baselineQueue = `bench-bare-${randomBytes(4).toString('hex')}`;
  const bareAdmit = async () => {
    const chatId = randomUUID();
    const runId = randomUUID();
    const messageId = randomUUID();
    const client = await stack.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO "Chat" (id, "userId", title, "updatedAt") VALUES ($1, $2, 'bench', now())`,
        [chatId, user.userId],
      );
      await client.query(
        `INSERT INTO "Run" (id, "chatId", "userId", "messageId", "assistantMessageId", "planMode", "traceId", "updatedAt")
         VALUES ($1, $2, $3, $4, $5, false, $6, now())`,
        [runId, chatId, user.userId, messageId, randomUUID(), randomBytes(16).toString('hex')],
      );
      await client.query(
        `INSERT INTO "Message" (id, "chatId", role, "runId", "contentBlocks", "createdAt") VALUES ($1, $2, 'user', $3, $4, now())`,
        [messageId, chatId, runId, JSON.stringify([{ type: 'text', text: 'hello bench' }])],
      );
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
    await bare.client.workflow.start('benchNoop', {
      taskQueue: baselineQueue,
      workflowId: `bench-${runId}`,
      args: [],
    });
  };

  // Every row leaves workflows behind on the dev server (one shard, SQLite), which slows the rows after
  // it; the short-latency ones run first: the crop, then the turns, with the admission rows last.
  // Crop with a real worker, the image from a loopback server.
  console.log(`bench: crop_image, ${CROPS} sequential with a worker…`);
  const workQueue = `bench-work-${randomBytes(4).toString('hex')}`;
  const workConfig = stack.config({ ...common, TEMPORAL_TASK_QUEUE: workQueue });
  const worker = await startWorker({ config: workConfig });
  const gw2 = await startGateway({ config: workConfig, temporalAddress });
  const jpeg = await sharp({
    create: {
      width: 2000,
      height: 1500,
      channels: 3,
      background: { r: 90, g: 140, b: 200 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 85 })
    .toBuffer();
  const media = await listen((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length });
    res.end(jpeg);
  });
  const rect = { x: 500, y: 400, width: 800, height: 600 };
  const crop = async () => {
    const res = await fetch(`${gw2.url}/api/v1/tools/crop_image`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ image_url: `${media.url}/photo.jpg`, ...rect }),
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`crop ${res.status} ${body.slice(0, 300)}`);
  };
  const sharpCrop = async () => {
    await sharp(jpeg)
      .extract({ left: rect.x, top: rect.y, width: rect.width, height: rect.height })
      .jpeg()
      .toBuffer();
  };
  const rows: Row[] = [];
  if (want('crop')) {
    await measure(crop, 5, 1);
    await measure(sharpCrop, 5, 1);
    const cropS = await measure(crop, CROPS, 1);
    const cropB = await measure(sharpCrop, CROPS, 1);
    const cropRow: Row = { name: 'crop 2000x1500', target: 'Δp50≤50ms', service: cropS, baseline: cropB };
    cropRow.diffP50Ms = cropS.p50 - cropB.p50;
    cropRow.meets = cropRow.diffP50Ms <= 50 && !cropS.errors;
    rows.push(cropRow);
  }

  const turns = want('turns')
    ? await measureTurns(stack, user, {
        e2eTurns: N('BENCH_TURNS', 40),
        sustainedSeconds: N('BENCH_SUSTAINED_SECONDS', 60),
        concurrency: N('BENCH_SUSTAINED_CHATS', 64),
      })
    : { rows: [], memory: {} };

  if (want('snapshot')) {
    // Snapshot poll of a terminal run (the running one is measured below, with a worker).
    console.log(`bench: snapshot poll, ${POLLS} each…`);
    const terminal = await send();
    await stack.db.pool
      .query(`UPDATE "Run" SET status = 'COMPLETE', "finishedAt" = now() WHERE id = $1`, [terminal.runId])
      .catch(() =>
        stack.db.pool.query(`UPDATE "Run" SET status = 'COMPLETE' WHERE id = $1`, [terminal.runId]),
      );
    const baseApp = express();
    baseApp.get('/runs/:runId', async (req, res) => {
      const { rows: found } = await stack.db.pool.query(
        `SELECT * FROM "Run" WHERE id = $1 AND "userId" = $2`,
        [req.params.runId, user.userId],
      );
      if (!found.length) res.status(404).json({ error: 'not found' });
      else res.json(found[0]);
    });
    const baseServer: Server = await new Promise((r) => {
      const s = baseApp.listen(0, '127.0.0.1', () => r(s));
    });
    const baseUrl = `http://127.0.0.1:${(baseServer.address() as AddressInfo).port}`;
    const poll = (run: { chatId: string; runId: string }) => async () => {
      const res = await fetch(`${gw.url}/api/v1/chats/${run.chatId}/runs/${run.runId}`, {
        headers: user.bearer,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`snapshot ${res.status}`);
    };
    const basePoll = (run: { runId: string }) => async () => {
      const res = await fetch(`${baseUrl}/runs/${run.runId}`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`baseline snapshot ${res.status}`);
    };
    await measure(poll(terminal), 100, 4);
    await measure(basePoll(terminal), 100, 4);
    rows.push(
      ratio(
        {
          name: 'snapshot terminal',
          target: '≤1.3x',
          service: await measure(poll(terminal), POLLS, 1),
          baseline: await measure(basePoll(terminal), POLLS, 1),
        },
        1.3,
      ),
    );
    // A running run: a plan-mode turn waiting for approval, its workflow live on the worker, so each
    // poll also queries the workflow.
    const waiting = await (async () => {
      const res = await fetch(`${gw2.url}/api/v1/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          text: 'crop this to the left half',
          image_urls: [`${media.url}/photo.jpg`],
          planMode: true,
        }),
      });
      return (await res.json()) as { chatId: string; runId: string };
    })();
    const pollLive = async () => {
      const res = await fetch(`${gw2.url}/api/v1/chats/${waiting.chatId}/runs/${waiting.runId}`, {
        headers: user.bearer,
      });
      const snapshot = (await res.json()) as { status: string };
      if (snapshot.status !== 'WAITING') throw new Error(`snapshot of the running run: ${snapshot.status}`);
    };
    for (let tries = 0; ; tries++) {
      try {
        await pollLive();
        break;
      } catch (err) {
        if (tries > 200) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await measure(pollLive, 100, 4);
    rows.push(
      ratio(
        {
          name: 'snapshot running',
          target: '≤1.3x',
          service: await measure(pollLive, POLLS, 1),
          baseline: await measure(basePoll(waiting), POLLS, 1),
        },
        1.3,
      ),
    );
    baseServer.closeAllConnections();
    baseServer.close();
  }

  // Last: every admission leaves its workflow open on a queue no worker polls, which would weigh on
  // the rows above.
  if (want('admission')) {
    console.log('bench: warm-up…');
    await measure(send, 50, 4);
    await measure(bareAdmit, 50, 4);

    console.log(`bench: admission, ${SEQ} sequential…`);
    const a1s = await measure(send, SEQ, 1);
    const a1b = await measure(bareAdmit, SEQ, 1);
    rows.push(
      ratio({ name: 'admission seq', target: 'p50≤1.2x p99≤1.5x', service: a1s, baseline: a1b }, 1.2, 1.5),
    );
    console.log(`bench: admission, ${CONC} at 16 concurrent…`);
    const a16s = await measure(send, CONC, 16);
    const a16b = await measure(bareAdmit, CONC, 16);
    rows.push(
      ratio({ name: 'admission c16', target: 'p50≤1.2x p99≤1.5x', service: a16s, baseline: a16b }, 1.2, 1.5),
    );
    console.log(`bench: admission, ${CONC} at 64 concurrent…`);
    const a64s = await measure(send, CONC, 64);
    const a64b = await measure(bareAdmit, CONC, 64);
    rows.push(
      ratio({ name: 'admission c64', target: 'p50≤1.2x p99≤1.5x', service: a64s, baseline: a64b }, 1.2, 1.5),
    );
  }

  rows.push(...turns.rows);
  const table = printTable(rows);
  console.log('\n' + table);
  const memoryTable = [
    '| moment | gateway MiB | worker MiB |',
    '|---|---|---|',
    ...Object.entries(turns.memory).map(([k, v]) => `| ${k} | ${v.gatewayMiB} | ${v.workerMiB} |`),
  ].join('\n');
  if (want('turns')) {
    console.log(`\nresident memory of the gateway and worker processes (the memory row):\n${memoryTable}`);
  }
  // A run of some rows, or without durable commits, gets a file of its own beside the day's full run.
  const name = [
    new Date().toISOString().slice(0, 10),
    ...(GROUPS.length === ROW_GROUPS.length ? [] : [GROUPS.join('+')]),
    ...(process.env.TEST_DATABASE_URL || embeddedPostgresDurable() ? [] : ['not-durable']),
  ].join('-');
  const out = {
    date: new Date().toISOString(),
    durationSeconds: (Date.now() - started) / 1000,
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      memoryBytes: os.totalmem(),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    samples: { SEQ, CONC, POLLS, CROPS },
    rowGroups: GROUPS,
    postgres,
    rows,
    memoryMiB: turns.memory,
    table,
    memoryTable,
  };
  const dir = path.join(__dirname, 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, `${name}.json`), JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote bench/results/${name}.json in ${out.durationSeconds.toFixed(0)} s`);

  media.server.close();
  await gw2.close();
  await worker.stop();
  await gw.close();
  await bare.connection.close();
  await stopTestStack();
}

main().then(
  () => process.exit(0),
  async (err) => {
    console.error(err);
    await stopTestStack().catch(() => undefined);
    process.exit(1);
  },
);
