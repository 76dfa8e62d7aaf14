/**
 * The rows that need a whole turn: end-to-end (send → agent.completed at a webhook receiver),
 * sustained load, and the memory of the gateway and worker processes. The gateway and the worker
 * run as their own processes here, as in production, so each one's memory can be read.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createTemporalClient } from '../core/temporal/connection';
import type { TestStack } from '../testkit/stack';
import type { TestUser } from '../testkit/users';
import { measure, measureFor, type Figures, type Row } from './measure';
import { startService, type ServiceProcess } from './services';

/** Activities of a turn without tools: markRunStarted, emit started, loadHistory, callModel, finishRun, emit completed. */
const AGENT_TURN_ACTIVITIES = 6;
const PLAN_WAITING_RUNS = 1000;

interface Receiver {
  url: string;
  server: Server;
  /** Resolves when agent.completed (or agent.failed) for the run arrives. */
  completion(runId: string): Promise<string>;
}

async function webhookReceiver(): Promise<Receiver> {
  const waiting = new Map<string, (event: string) => void>();
  const early = new Map<string, string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(204).end();
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        event: string;
        data: { runId?: string };
      };
      const runId = envelope.data.runId;
      if (!runId || (envelope.event !== 'agent.completed' && envelope.event !== 'agent.failed')) return;
      const resolve = waiting.get(runId);
      if (resolve) {
        waiting.delete(runId);
        resolve(envelope.event);
      } else early.set(runId, envelope.event);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    server,
    completion(runId) {
      const event = early.get(runId);
      if (event) {
        early.delete(runId);
        return Promise.resolve(event);
      }
      return new Promise((resolve) => waiting.set(runId, resolve));
    },
  };
}

export interface TurnRows {
  rows: Row[];
  memory: Record<string, { gatewayMiB: number; workerMiB: number }>;
}

export async function measureTurns(
  stack: TestStack,
  user: TestUser,
  options: { e2eTurns: number; sustainedSeconds: number; concurrency: number },
): Promise<TurnRows> {
  const queue = `bench-turns-${randomBytes(4).toString('hex')}`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: queue,
    APP_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: '0',
    WORKER_HTTP_PORT: '0',
    MODEL_PROVIDER: 'local',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    SEND_RATE_LIMIT_PER_MINUTE: '100000000',
    API_RATE_LIMIT_PER_MINUTE: '100000000',
    PLAN_APPROVAL_TIMEOUT: '3600000',
  };
  const worker = await startService('worker', env);
  const gateway = await startService('gateway', env);
  const base = `http://127.0.0.1:${port}`;
  const receiver = await webhookReceiver();
  const bare = createTemporalClient({ address: stack.temporalAddress, namespace: 'default' });
  const bareQueue = `bench-bare-turn-${randomBytes(4).toString('hex')}`;
  const bareConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  const bareWorker = await Worker.create({
    connection: bareConnection,
    taskQueue: bareQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: {
      noop: async () => undefined,
      post: async (url: string, body: string) => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`receiver answered ${res.status}`);
      },
    },
  });
  const bareRunning = bareWorker.run();
  const memory: TurnRows['memory'] = {};
  const rows: Row[] = [];
  try {
    const hook = await fetch(`${base}/api/webhook-endpoints`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['agent.completed', 'agent.failed'] }),
    });
    if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${await hook.text()}`);

    const headers = { ...user.bearer, 'content-type': 'application/json' };
    const send = async (body: object): Promise<{ chatId: string; runId: string }> => {
      const res = await fetch(`${base}/api/v1/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { chatId: string; runId: string };
      if (res.status !== 202) throw new Error(`send ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const turn = (chatId?: string) => async () => {
      const { runId } = await send({ text: 'hello bench', ...(chatId ? { chatId } : {}) });
      const event = await receiver.completion(runId);
      if (event !== 'agent.completed') throw new Error(`run ${runId}: ${event}`);
    };
    const bareTurn = async () => {
      const id = randomUUID();
      const arrived = receiver.completion(id);
      await bare.client.workflow.start('bareTurnWorkflow', {
        taskQueue: bareQueue,
        workflowId: `bench-turn-${id}`,
        args: [
          AGENT_TURN_ACTIVITIES,
          receiver.url,
          JSON.stringify({ event: 'agent.completed', data: { runId: id } }),
        ],
      });
      await arrived;
    };

    console.log(`bench: end-to-end turn, ${options.e2eTurns} sequential…`);
    await measure(turn(), 10, 1);
    await measure(bareTurn, 10, 1);
    const e2eS = await measure(turn(), options.e2eTurns, 1);
    const e2eB = await measure(bareTurn, options.e2eTurns, 1);
    rows.push(ratioRow('end-to-end turn', '≤1.5x', e2eS, e2eB, 1.5));

    // Each lane owns a chat and sends its next turn once the previous one has completed.
    const chats: string[] = [];
    for (let i = 0; i < options.concurrency; i++) {
      const res = await fetch(`${base}/api/v1/chats`, { method: 'POST', headers, body: JSON.stringify({}) });
      chats.push(((await res.json()) as { id: string }).id);
    }
    const sustained = () =>
      measureFor(options.sustainedSeconds, options.concurrency, (lane) => turn(chats[lane])());
    const bareStarts = () =>
      measureFor(options.sustainedSeconds, options.concurrency, async () => {
        await bare.client.workflow.start('benchNoop', {
          taskQueue: `${bareQueue}-idle`,
          workflowId: randomUUID(),
        });
      });

    const waitingRound = async (round: string) => {
      console.log(`bench: memory round ${round}: ${PLAN_WAITING_RUNS} runs waiting on plan approval…`);
      const runs = await measure(
        async () => {
          waitingRuns.push(
            await send({
              text: 'crop this to the left half',
              image_urls: ['http://127.0.0.1:9/photo.png'],
              planMode: true,
            }),
          );
        },
        PLAN_WAITING_RUNS,
        options.concurrency,
      );
      if (runs.errors) throw new Error(`${runs.errors} plan-mode sends failed`);
      await allWaiting(
        stack,
        waitingRuns.map((r) => r.runId),
      );
      memory[`after ${PLAN_WAITING_RUNS} waiting (round ${round})`] = await rss(gateway, worker);
      await measure(
        async (i) => {
          const run = waitingRuns[i] as { chatId: string; runId: string };
          const res = await fetch(`${base}/api/v1/chats/${run.chatId}/runs/${run.runId}/cancel`, {
            method: 'POST',
            headers: user.bearer,
          });
          await res.arrayBuffer();
        },
        waitingRuns.length,
        16,
      );
      waitingRuns.length = 0;
    };
    const waitingRuns: { chatId: string; runId: string }[] = [];

    console.log(
      `bench: sustained load, ${options.sustainedSeconds} s at ${options.concurrency} chats (round 1)…`,
    );
    const s1 = await sustained();
    memory['after sustained load (round 1)'] = await rss(gateway, worker);
    await waitingRound('1');
    console.log(`bench: sustained load (round 2)…`);
    const s2 = await sustained();
    memory['after sustained load (round 2)'] = await rss(gateway, worker);
    await waitingRound('2');
    // Last: the starts leave their workflows open on a queue no worker polls.
    console.log(`bench: Temporal starts, ${options.sustainedSeconds} s at ${options.concurrency} in flight…`);
    const b1 = await bareStarts();
    const sustainedRow: Row = {
      name: `sustained ${options.sustainedSeconds}s c${options.concurrency}`,
      target: 'ops/s ≥0.6x',
      service: s1,
      baseline: b1,
      ratioP50: s1.throughput / b1.throughput,
      ratioP99: s1.throughput / b1.throughput,
      meets: s1.throughput / b1.throughput >= 0.6 && !s1.errors,
      note: 'ratio = turns per second ÷ Temporal starts per second',
    };
    rows.push(sustainedRow);
    const growth = memoryGrowth(memory);
    rows.push({
      name: 'memory',
      target: 'no growth',
      meets: growth.ok,
      note: 'see the memory table',
    });
    memory['growth, round 2 against round 1'] = growth.delta;
    if (s2.errors) console.error(`  round 2 of the sustained load had ${s2.errors} errors`);
  } finally {
    await gateway.stop();
    await worker.stop();
    bareWorker.shutdown();
    await bareRunning;
    await bareConnection.close();
    await bare.connection.close();
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
  return { rows, memory };
}

function ratioRow(name: string, target: string, service: Figures, baseline: Figures, max: number): Row {
  const ratioP50 = service.p50 / baseline.p50;
  const ratioP99 = service.p99 / baseline.p99;
  return {
    name,
    target,
    service,
    baseline,
    ratioP50,
    ratioP99,
    meets: ratioP50 <= max && ratioP99 <= max && !service.errors,
  };
}

/** Until every run is WAITING on its plan, read from the database (not the API, which it would load). */
async function allWaiting(stack: TestStack, runIds: string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await stack.db.pool.query<{ waiting: number; ended: number }>(
      `SELECT count(*) FILTER (WHERE status = 'WAITING')::int AS waiting,
              count(*) FILTER (WHERE status IN ('COMPLETE', 'FAILED', 'CANCELLED'))::int AS ended
         FROM "Run" WHERE id = ANY($1::uuid[])`,
      [runIds],
    );
    const { waiting, ended } = rows[0] as { waiting: number; ended: number };
    if (ended) throw new Error(`${ended} plan-mode runs ended instead of waiting`);
    if (waiting === runIds.length) return;
    if (Date.now() > deadline) throw new Error(`only ${waiting} of ${runIds.length} runs reached WAITING`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function rss(gateway: ServiceProcess, worker: ServiceProcess) {
  const mib = (b: number) => Math.round(b / 2 ** 20);
  return { gatewayMiB: mib(await gateway.rssBytes()), workerMiB: mib(await worker.rssBytes()) };
}

/** Round 2 against round 1, per process and moment: within 15% or 32 MiB counts as no growth. */
function memoryGrowth(memory: TurnRows['memory']): {
  ok: boolean;
  delta: { gatewayMiB: number; workerMiB: number };
} {
  const delta = { gatewayMiB: 0, workerMiB: 0 };
  let ok = true;
  for (const moment of ['after sustained load', `after ${PLAN_WAITING_RUNS} waiting`]) {
    const r1 = memory[`${moment} (round 1)`];
    const r2 = memory[`${moment} (round 2)`];
    if (!r1 || !r2) continue;
    for (const proc of ['gatewayMiB', 'workerMiB'] as const) {
      const grown = r2[proc] - r1[proc];
      if (grown > Math.max(32, r1[proc] * 0.15)) ok = false;
      delta[proc] = Math.max(delta[proc], grown);
    }
  }
  return { ok, delta };
}
