import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { ModelReply } from '../../core/model/types';
import type { Tracing } from '../../core/telemetry/tracing';
import type { ActivityDeps } from '../../activities/deps';
import type { GatewayDeps } from '../../apps/gateway/deps';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { waitFor } from '../support/wait';

export interface Turn {
  chatId: string;
  runId: string;
}

export interface Snapshot {
  status: string;
  waitpoints: { id: string; status: string }[];
}

/** A gateway and a worker on a task queue of their own, a user, and the calls the ops tests make. */
export interface Service {
  gateway: TestGateway;
  worker: TestWorker;
  user: TestUser;
  send(body: Record<string, unknown>, headers?: Record<string, string>): Promise<Turn>;
  snapshot(turn: Turn): Promise<Snapshot>;
  until(turn: Turn, accept: (s: Snapshot) => boolean, what: string): Promise<Snapshot>;
  /** Waits for the run's pending plan and decides it. */
  decide(turn: Turn, approved: boolean): Promise<void>;
  cancel(turn: Turn): Promise<void>;
  close(): Promise<void>;
}

export const terminal = (s: Snapshot) => ['COMPLETE', 'FAILED', 'CANCELLED'].includes(s.status);

/** A reply that asks for one ai_image_2 call (local-preview draws it). */
export const drawReply = (): ModelReply => ({
  text: 'Drawing it.',
  toolCalls: [{ id: randomUUID(), toolName: 'ai_image_2', input: { prompt: 'a lighthouse' } }],
});

export async function startService(
  options: {
    model?: LanguageModelV4;
    config?: Record<string, string>;
    gatewayDeps?: Partial<GatewayDeps>;
    workerDeps?: Partial<ActivityDeps>;
    tracing?: Tracing;
  } = {},
): Promise<Service> {
  const config = (await testStack()).config({
    TEMPORAL_TASK_QUEUE: `ops-${randomUUID()}`,
    IMAGE_PROVIDER: 'local-preview',
    ...options.config,
  });
  const worker = await startWorker({
    config,
    ...(options.model ? { model: options.model } : {}),
    deps: options.workerDeps,
    tracing: options.tracing,
  });
  const gateway = await startGateway({ config, deps: options.gatewayDeps });
  const user = await createTestUser();
  const json = { 'content-type': 'application/json', ...user.bearer };

  const snapshot = async (turn: Turn) => {
    const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, {
      headers: user.bearer,
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as Snapshot;
  };
  const until = (turn: Turn, accept: (s: Snapshot) => boolean, what: string) =>
    waitFor(
      async () => {
        const s = await snapshot(turn);
        return accept(s) ? s : undefined;
      },
      { what, timeoutMs: 60_000 },
    );
  return {
    gateway,
    worker,
    user,
    snapshot,
    until,
    async send(body, headers = {}) {
      const res = await fetch(`${gateway.url}/api/v1/completions`, {
        method: 'POST',
        headers: { ...json, ...headers },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 202, await res.clone().text());
      return (await res.json()) as Turn;
    },
    async decide(turn, approved) {
      const s = await until(turn, (x) => x.waitpoints.some((w) => w.status === 'PENDING'), 'a pending plan');
      const waitpoint = s.waitpoints.find((w) => w.status === 'PENDING');
      const res = await fetch(
        `${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waitpoint?.id}/complete`,
        { method: 'POST', headers: json, body: JSON.stringify({ approved }) },
      );
      assert.equal(res.status, 202, await res.clone().text());
    },
    async cancel(turn) {
      const res = await fetch(`${gateway.url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/cancel`, {
        method: 'POST',
        headers: user.bearer,
      });
      assert.equal(res.status, 202, await res.clone().text());
    },
    async close() {
      await gateway.close();
      await worker.stop();
    },
  };
}

export interface ReceivedPost {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A plain-HTTP webhook receiver answering `status` (200 unless changed), keeping what it got. */
export async function startReceiver(
  onPost?: (post: ReceivedPost) => void,
): Promise<{ url: string; posts: ReceivedPost[]; status: number; server: Server }> {
  const posts: ReceivedPost[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const post = {
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      posts.push(post);
      onPost?.(post);
      res.statusCode = state.status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    posts,
    server,
  });
}
