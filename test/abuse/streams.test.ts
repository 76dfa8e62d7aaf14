/**
 * Open streams and waits (a run's live stream, wait_for_run, resources/subscribe): capped per
 * user over every gateway, and ended at once when the credential they were opened with ends.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Config } from '../../core/config/config';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { oauthFlow } from '../support/oauth';
import { waitFor } from '../support/wait';

type Turn = { chatId: string; runId: string };
type RpcAnswer = {
  result?: { isError?: boolean; structuredContent?: { code?: string; status?: string } };
  error?: { code: number; message: string; data?: { code?: string } };
};

describe('open streams and waits', function () {
  this.timeout(90_000);
  let config: Config;
  let base: string;
  let gatewayA: TestGateway;
  let gatewayB: TestGateway;
  const opened: AbortController[] = [];
  // Held until the test ends: a response nothing refers to may be collected, and its stream closed.
  const answers: Response[] = [];

  before(async () => {
    // No worker: every run stays QUEUED, so nothing but the test ends a stream or a wait. The
    // heartbeat is long, so nothing but a notification can end one within seconds.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `streams-${randomUUID()}`,
      PUBLIC_BASE_URL: base,
      MAX_OPEN_STREAMS_PER_USER: '3',
      STREAM_HEARTBEAT_INTERVAL: '1m',
    });
    gatewayA = await startGateway({ config, port });
    gatewayB = await startGateway({ config });
  });
  afterEach(() => {
    for (const stop of opened.splice(0)) stop.abort();
    answers.length = 0;
  });
  after(async () => {
    await gatewayA.close();
    await gatewayB.close();
  });

  async function send(who: TestUser): Promise<Turn> {
    const res = await fetch(`${gatewayA.url}/api/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...who.bearer },
      body: JSON.stringify({ text: 'follow me' }),
    });
    assert.equal(res.status, 202);
    const { chatId, runId } = (await res.json()) as Turn;
    return { chatId, runId };
  }

  /** A request that stays open until the test aborts it (or the server ends it). */
  function held(url: string, init: RequestInit = {}): Promise<Response> {
    const stop = new AbortController();
    opened.push(stop);
    return fetch(url, { ...init, signal: stop.signal }).then((res) => {
      answers.push(res);
      return res;
    });
  }

  /** The run's live stream: with the API key on /api/v1, with the session on the console's mirror. */
  const stream = (gateway: TestGateway, who: TestUser, turn: Turn, by: 'key' | 'session' = 'key') =>
    held(
      `${gateway.url}${by === 'key' ? '/api/v1' : '/console/api/v1'}/chats/${turn.chatId}/runs/${turn.runId}/events`,
      { headers: by === 'key' ? who.bearer : { cookie: who.cookie } },
    );

  /** One MCP request, as a stateless client sends it; its answer may be an event stream. */
  const mcp = (gateway: TestGateway, authorization: string, method: string, params: unknown) =>
    held(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
  const waitForRun = (gateway: TestGateway, authorization: string, turn: Turn) =>
    mcp(gateway, authorization, 'tools/call', {
      name: 'wait_for_run',
      arguments: { ...turn, timeoutSeconds: 60 },
    });
  const subscribe = (gateway: TestGateway, authorization: string, uri: string) =>
    mcp(gateway, authorization, 'resources/subscribe', { uri });

  /** The JSON-RPC answer at the end of an MCP response (plain JSON, or the last event of a stream). */
  async function answerOf(res: Response): Promise<RpcAnswer> {
    const text = await res.text();
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .at(-1);
    return JSON.parse(data ? data.slice(6) : text) as RpcAnswer;
  }

  const slotsOf = async (userId: string) =>
    Number(
      (
        await (
          await testStack()
        ).db.pool.query(`SELECT count(*) FROM "StreamSlot" WHERE "userId" = $1 AND "expiresAt" > now()`, [
          userId,
        ])
      ).rows[0].count,
    );
  const slotsAre = (userId: string, n: number) =>
    waitFor(async () => ((await slotsOf(userId)) === n ? true : undefined), { what: `${n} open` });

  it('refuses a stream or a wait past MAX_OPEN_STREAMS_PER_USER with 429 ACTIVE_LIMIT, over every gateway and route', async () => {
    const user = await createTestUser();
    const turn = await send(user);
    // Three places, taken three ways on two gateways.
    const first = await stream(gatewayA, user, turn);
    assert.equal(first.status, 200);
    assert.equal((await stream(gatewayB, user, turn, 'session')).status, 200);
    const waiting = await waitForRun(gatewayB, user.bearer.authorization, turn);
    assert.equal(waiting.status, 200);
    await slotsAre(user.userId, 3);

    const refused = await stream(gatewayA, user, turn);
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as { code: string; details: { path: string }[] };
    assert.equal(body.code, 'ACTIVE_LIMIT');
    assert.deepEqual(
      body.details.map((d) => d.path),
      ['MAX_OPEN_STREAMS_PER_USER'],
    );
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    const wait = await answerOf(await waitForRun(gatewayA, user.bearer.authorization, turn));
    assert.equal(wait.result?.isError, true);
    assert.equal(wait.result?.structuredContent?.code, 'ACTIVE_LIMIT');
    const subscription = await answerOf(
      await subscribe(gatewayA, user.bearer.authorization, `chat://${turn.chatId}/runs/${turn.runId}`),
    );
    assert.equal(subscription.error?.data?.code, 'ACTIVE_LIMIT', JSON.stringify(subscription));
    // Another user's places are their own.
    const other = await createTestUser();
    assert.equal((await stream(gatewayA, other, await send(other))).status, 200);

    // A stream the client closes gives its place back.
    opened[0]?.abort();
    await slotsAre(user.userId, 2);
    assert.equal((await stream(gatewayB, user, turn)).status, 200);
  });

  it("ends a revoked API key's streams and waits at once", async () => {
    const user = await createTestUser();
    const turn = await send(user);
    const live = await stream(gatewayB, user, turn);
    const waiting = waitForRun(gatewayB, user.bearer.authorization, turn);
    await slotsAre(user.userId, 2);
    const revoked = await fetch(`${gatewayA.url}/api/keys/${user.apiKeyId}`, {
      method: 'DELETE',
      headers: { cookie: user.cookie },
    });
    assert.equal(revoked.status, 204);
    const started = Date.now();
    await live.text();
    const wait = await answerOf(await waiting);
    assert.equal(wait.result?.structuredContent?.code, 'UNAUTHORIZED', JSON.stringify(wait));
    assert.ok(Date.now() - started < 10_000, `ended ${Date.now() - started} ms after the revocation`);
    await slotsAre(user.userId, 0);
  });

  it("ends a revoked OAuth grant's waits and subscriptions at once", async () => {
    const user = await createTestUser();
    const turn = await send(user);
    const { tokens } = await oauthFlow(base, user.cookie).grant();
    const bearer = `Bearer ${tokens.access_token}`;
    const waiting = waitForRun(gatewayA, bearer, turn);
    const subscribed = subscribe(gatewayB, bearer, `chat://${turn.chatId}`);
    await slotsAre(user.userId, 2);
    const grants = (await (
      await fetch(`${gatewayA.url}/api/oauth-grants`, { headers: { cookie: user.cookie } })
    ).json()) as { data: { id: string }[] };
    const revoked = await fetch(`${gatewayA.url}/api/oauth-grants/${grants.data[0]?.id}`, {
      method: 'DELETE',
      headers: { cookie: user.cookie },
    });
    assert.equal(revoked.status, 204);
    const started = Date.now();
    const wait = await answerOf(await waiting);
    assert.equal(wait.result?.structuredContent?.code, 'UNAUTHORIZED', JSON.stringify(wait));
    const subscription = await answerOf(await subscribed);
    assert.equal(subscription.error?.data?.code, 'UNAUTHORIZED', JSON.stringify(subscription));
    assert.ok(Date.now() - started < 10_000, `ended ${Date.now() - started} ms after the revocation`);
    await slotsAre(user.userId, 0);
  });

  it('ends a console stream when its session signs out, at once', async () => {
    const user = await createTestUser();
    const turn = await send(user);
    const live = await stream(gatewayB, user, turn, 'session');
    await slotsAre(user.userId, 1);
    const signedOut = await fetch(`${gatewayA.url}/api/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: user.cookie },
    });
    assert.equal(signedOut.status, 204);
    const started = Date.now();
    await live.text();
    assert.ok(Date.now() - started < 10_000, `ended ${Date.now() - started} ms after the sign-out`);
    await slotsAre(user.userId, 0);
  });
});
