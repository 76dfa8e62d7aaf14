/** What every part of the bench shares: the stack, a user, a loopback image, and how to start the service. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createTemporalClient, type TemporalClientHandle } from '../core/temporal/connection';
import { createTestUser, type TestUser } from '../testkit/users';
import { startGateway, type TestGateway } from '../testkit/gateway';
import { freePort, type TestStack } from '../testkit/stack';
import { startWorker, type TestWorker } from '../testkit/worker';
import { serviceClient, type ServiceClient } from './client';
import type { Selection } from './selection';
import { startService, type ServiceProcess } from './services';

export interface Bench {
  stack: TestStack;
  selection: Selection;
  /** The bench's user. It has no webhook endpoints, so its turns pay nothing for events. */
  user: TestUser;
  /** A 2000×1500 JPEG served on loopback, for the crop tool. */
  image: { url: string; jpeg: Buffer };
  temporal: TemporalClientHandle;
  /** Settings every gateway and worker of the bench runs with, in-process or not. */
  env: Record<string, string>;
  /** The nice value the worker processes and the Temporal server run at, as `npm start` runs them. */
  backgroundNice: number;
  /** The real gateway and worker in the bench's own process, on a queue of their own; started once, on first use. */
  inProcess(): Promise<{ gateway: TestGateway; worker: TestWorker }>;
  /** Stops the in-process pair, whose idle pollers would otherwise load the server under the rows after it. */
  stopInProcess(): Promise<void>;
  close(): Promise<void>;
}

export async function openBench(
  stack: TestStack,
  selection: Selection,
  backgroundNice: number,
): Promise<Bench> {
  const storageDir = await mkdtemp(path.join(os.tmpdir(), 'bench-files-'));
  const env = {
    SEND_RATE_LIMIT_PER_MINUTE: '100000000',
    API_RATE_LIMIT_PER_MINUTE: '100000000',
    // One user drives the whole load: its per-user caps are raised as an operator would.
    MAX_ACTIVE_RUNS_PER_USER: '100000000',
    MAX_ACTIVE_TOOL_CALLS_PER_USER: '100000000',
    MAX_OPEN_STREAMS_PER_USER: '100000000',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ALLOW_INSECURE_WEBHOOKS: 'true',
    STORAGE_LOCAL_DIR: storageDir,
    MODEL_PROVIDER: 'local',
    PLAN_APPROVAL_TIMEOUT: '3600000',
    // A send answers once its turn is durable, never after a wait for its start that only some
    // sends make (paced: idle ones wait, busy ones do not): every row that times a send, and its
    // baseline, then does the same work (bench/README.md).
    SEND_START_WAIT: 'off',
  };
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
  const media: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length });
    res.end(jpeg);
  });
  await new Promise<void>((r) => media.listen(0, '127.0.0.1', () => r()));
  const temporal = createTemporalClient({ address: stack.temporalAddress, namespace: 'default' });
  let pair: Promise<{ gateway: TestGateway; worker: TestWorker }> | undefined;
  const stopInProcess = async () => {
    if (!pair) return;
    const { gateway, worker } = await pair;
    pair = undefined;
    await gateway.close();
    await worker.stop();
  };
  return {
    stack,
    selection,
    user: await createTestUser(),
    image: { url: `http://127.0.0.1:${(media.address() as AddressInfo).port}/photo.jpg`, jpeg },
    temporal,
    env,
    backgroundNice,
    inProcess() {
      pair ??= (async () => {
        const config = stack.config({
          ...env,
          TEMPORAL_TASK_QUEUE: `bench-work-${randomBytes(4).toString('hex')}`,
        });
        const worker = await startWorker({ config });
        return { worker, gateway: await startGateway({ config }) };
      })();
      return pair;
    },
    stopInProcess,
    async close() {
      await stopInProcess();
      media.closeAllConnections();
      media.close();
      await temporal.connection.close();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}

/** The gateway and the worker as production runs them, one process each, on a queue of their own. */
export interface ServiceProcesses {
  gateway: ServiceProcess;
  worker: ServiceProcess;
  taskQueue: string;
  /** The gateway's base URL. */
  url: string;
  /** The service's API as `user` calls it. */
  client(user: TestUser): ServiceClient;
  stop(): Promise<void>;
}

/** What a gateway or worker process of the bench runs with, serving `taskQueue` on `port`. */
function processEnv(bench: Bench, taskQueue: string, port: number): Record<string, string> {
  return {
    ...bench.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    DATABASE_URL: bench.stack.databaseUrl,
    TEMPORAL_ADDRESS: bench.stack.temporalAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    APP_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: String(port),
    // The operator ports: any free one, beside whatever else runs here.
    METRICS_PORT: '0',
    WORKER_HTTP_PORT: '0',
  };
}

/**
 * A gateway process alone, on a queue no worker polls: what admission costs a client on another
 * machine, without the bench's own client work competing with the gateway for one event loop.
 */
export async function startIdleGatewayProcess(
  bench: Bench,
): Promise<{ process: ServiceProcess; url: string }> {
  const port = await freePort();
  const env = processEnv(bench, `bench-idle-${randomBytes(4).toString('hex')}`, port);
  return { process: await startService('gateway', env), url: `http://127.0.0.1:${port}` };
}

export async function startServiceProcesses(bench: Bench): Promise<ServiceProcesses> {
  const taskQueue = `bench-turns-${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  const env = processEnv(bench, taskQueue, port);
  const worker = await startService('worker', env, bench.backgroundNice);
  const gateway = await startService('gateway', env).catch(async (err: unknown) => {
    await worker.stop();
    throw err;
  });
  return {
    gateway,
    worker,
    taskQueue,
    url: `http://127.0.0.1:${port}`,
    client: (user) => serviceClient(`http://127.0.0.1:${port}`, user),
    async stop() {
      await gateway.stop();
      await worker.stop();
    },
  };
}
