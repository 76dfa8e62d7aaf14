/**
 * One set of limits per user, whatever the credential and the route: the console's mirror of the
 * public routes, every API key of a user, MCP with a key or an OAuth grant all count against the
 * same `api` and `send` counters; and the bytes a user may store (uploads and tool outputs).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import type { Config } from '../../core/config/config';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { oauthFlow } from '../support/oauth';

type Answer = { status: number; code?: string };

describe('per-user limits, whatever the credential or the route', function () {
  this.timeout(120_000);
  let dir: string;
  let config: Config;
  let base: string;
  const gateways: TestGateway[] = [];
  const clients: Client[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'user-limits-'));
    // The issuer OAuth names must be where the clients connect: one fixed port per gateway.
    config = (await testStack()).config({
      TEMPORAL_TASK_QUEUE: `user-limits-${randomUUID()}`,
      STORAGE_LOCAL_DIR: path.join(dir, 'storage'),
      // Every send of a burst is admitted into its own chat: only the rate limit may refuse one.
      MAX_ACTIVE_RUNS_PER_USER: '1000',
    });
  });
  after(async () => {
    for (const client of clients) await client.close();
    for (const gateway of gateways) await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A gateway of its own, at a fixed address (its OAuth issuer), with these settings changed. */
  async function gatewayWith(overrides: Partial<Config>): Promise<TestGateway> {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const gateway = await startGateway({ config: { ...config, PUBLIC_BASE_URL: base, ...overrides }, port });
    gateways.push(gateway);
    return gateway;
  }

  const answer = async (res: Response): Promise<Answer> => {
    const text = await res.text();
    return { status: res.status, code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
  };

  const send = (gateway: TestGateway, headers: Record<string, string>, prefix: string, text: string) =>
    fetch(`${gateway.url}${prefix}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ text }),
    }).then(answer);

  const chatCount = async (userId: string) =>
    Number(
      (await (await testStack()).db.pool.query(`SELECT count(*) FROM "Chat" WHERE "userId" = $1`, [userId]))
        .rows[0].count,
    );

  /** An MCP client of `gateway` authenticated by `authorization` (an API key or an access token). */
  async function mcpClient(gateway: TestGateway, authorization: string): Promise<Client> {
    const client = new Client({ name: 'user-limits', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { authorization } },
      }),
    );
    clients.push(client);
    return client;
  }

  /** send_message over MCP: 202's equivalent, or the refusal's code (429 is an HTTP error there). */
  async function mcpSend(client: Client, text: string): Promise<Answer> {
    try {
      const result = (await client.callTool({ name: 'send_message', arguments: { text } })) as CallToolResult;
      const code = (result.structuredContent as { code?: string } | undefined)?.code;
      return result.isError ? { status: 0, code } : { status: 202 };
    } catch (err) {
      const match = /RATE_LIMITED/.exec(String(err));
      if (!match) throw err;
      return { status: 429, code: 'RATE_LIMITED' };
    }
  }

  it('holds the console to SEND_RATE_LIMIT_PER_MINUTE: of 80 sends in a burst, 60 are admitted', async () => {
    const gateway = await gatewayWith({});
    const user = await createTestUser();
    // As a browser sends them (with its Origin), and as a script with the cookie does (without).
    const answers = await Promise.all(
      Array.from({ length: 80 }, (_, i) =>
        send(
          gateway,
          { cookie: user.cookie, ...(i % 2 ? { origin: gateway.url } : {}) },
          '/console/api/v1',
          `burst ${i}`,
        ),
      ),
    );
    const admitted = answers.filter((a) => a.status === 202).length;
    const refused = answers.filter((a) => a.status === 429 && a.code === 'RATE_LIMITED').length;
    assert.deepEqual({ admitted, refused }, { admitted: 60, refused: 20 }, JSON.stringify(answers));
    assert.equal(await chatCount(user.userId), 60, 'a refused send writes nothing');
    // The same counter as the user's API key: the key has no send left either.
    assert.deepEqual(await send(gateway, user.bearer, '/api/v1', 'by key'), {
      status: 429,
      code: 'RATE_LIMITED',
    });
  });

  it("counts every API key of a user, and the console, against the user's one API_RATE_LIMIT_PER_MINUTE", async () => {
    const gateway = await gatewayWith({ API_RATE_LIMIT_PER_MINUTE: 9 });
    const user = await createTestUser();
    // A second key, made as the user makes one (the management routes count nothing).
    const created = await fetch(`${gateway.url}/api/keys`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'second' }),
    });
    assert.equal(created.status, 201);
    const second = { authorization: `Bearer ${((await created.json()) as { key: string }).key}` };
    const ways = [
      { name: 'first key', url: `${gateway.url}/api/v1/chats`, headers: user.bearer },
      { name: 'second key', url: `${gateway.url}/api/v1/chats`, headers: second },
      { name: 'console', url: `${gateway.url}/console/api/v1/chats`, headers: { cookie: user.cookie } },
    ];
    for (let i = 0; i < 9; i++) {
      const way = ways[i % 3]!;
      const res = await fetch(way.url, { headers: way.headers });
      assert.equal(res.status, 200, `call ${i} (${way.name})`);
      assert.equal(res.headers.get('ratelimit-remaining'), String(8 - i), `call ${i} (${way.name})`);
    }
    for (const way of ways) {
      const refused = await answer(await fetch(way.url, { headers: way.headers }));
      assert.deepEqual(refused, { status: 429, code: 'RATE_LIMITED' }, way.name);
    }
    // Another user's counter is their own.
    const other = await createTestUser();
    assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: other.bearer })).status, 200);
  });

  it('counts MCP sends, with an API key and with an OAuth token, against the send limit REST counts', async () => {
    const gateway = await gatewayWith({ SEND_RATE_LIMIT_PER_MINUTE: 4 });
    const user = await createTestUser();
    const { tokens } = await oauthFlow(base, user.cookie).grant();
    const byKey = await mcpClient(gateway, user.bearer.authorization);
    const byGrant = await mcpClient(gateway, `Bearer ${tokens.access_token}`);
    const sends = [
      () => send(gateway, user.bearer, '/api/v1', 'over REST'),
      () => mcpSend(byKey, 'over MCP with the key'),
      () => mcpSend(byGrant, 'over MCP with the grant'),
      () => send(gateway, { cookie: user.cookie }, '/console/api/v1', 'in the console'),
    ];
    for (const [i, sent] of sends.entries()) assert.equal((await sent()).status, 202, `send ${i}`);
    for (const [i, sent] of sends.entries())
      assert.deepEqual(await sent(), { status: 429, code: 'RATE_LIMITED' }, `send ${i} past the limit`);
    assert.equal(await chatCount(user.userId), 4);
  });

  describe('MAX_STORED_BYTES_PER_USER', () => {
    let gateway: TestGateway;
    let worker: TestWorker;
    let png: Buffer;
    const quota = 6_000;

    before(async () => {
      // A queue of its own: the sends above have runs waiting on theirs, for no worker.
      const settings = { MAX_STORED_BYTES_PER_USER: quota, TEMPORAL_TASK_QUEUE: `quota-${randomUUID()}` };
      gateway = await gatewayWith(settings);
      worker = await startWorker({ config: { ...config, ...settings } });
      // About 2.8 kB of noise, which PNG cannot compress: two fit in the quota, a third does not.
      png = await sharp(randomBytes(30 * 30 * 3), { raw: { width: 30, height: 30, channels: 3 } })
        .png()
        .toBuffer();
      assert.ok(png.length > quota / 3 && png.length < quota / 2, `${png.length} bytes`);
    });
    after(() => worker.stop());

    const upload = (who: TestUser, prefix: string, extra: Record<string, string> = {}) => {
      const form = new FormData();
      form.append('file', new Blob([png]), 'noise.png');
      for (const [name, value] of Object.entries(extra)) form.append(name, value);
      return fetch(`${gateway.url}${prefix}`, {
        method: 'POST',
        headers: prefix.startsWith('/console') ? { cookie: who.cookie } : who.bearer,
        body: form,
      });
    };
    /** The user's objects on disk (local storage keeps their bytes under objects/). */
    const storedFiles = async (userId: string) =>
      (
        await readdir(path.join(dir, 'storage', 'objects'), { recursive: true, withFileTypes: true }).catch(
          () => [],
        )
      ).filter((e) => e.isFile() && e.parentPath.includes(userId)).length;

    it('refuses an upload past the quota with 422 LIMIT_REACHED, on every route, storing nothing', async () => {
      const user = await createTestUser();
      const first = await upload(user, '/api/v1/uploads');
      assert.equal(first.status, 201);
      const { attachments } = (await first.json()) as { attachments: { id: string }[] };
      assert.equal((await upload(user, '/console/api/v1/uploads')).status, 201);
      assert.equal(await storedFiles(user.userId), 2);

      for (const [route, extra] of [
        ['/api/v1/uploads', {}],
        ['/console/api/v1/uploads', {}],
        ['/api/v1/completions', { text: 'with a file' }],
      ] as const) {
        const refused = await upload(user, route, extra);
        assert.equal(refused.status, 422, route);
        const body = (await refused.json()) as { code: string; details: { path: string }[] };
        assert.equal(body.code, 'LIMIT_REACHED', route);
        assert.deepEqual(
          body.details.map((d) => d.path),
          ['MAX_STORED_BYTES_PER_USER'],
        );
      }
      assert.equal(await storedFiles(user.userId), 2, 'nothing more stored');
      const { db } = await testStack();
      const { rows } = await db.pool.query<{ attachments: number; chats: number }>(
        `SELECT (SELECT count(*) FROM "Attachment" WHERE "userId" = $1)::int AS attachments,
                (SELECT count(*) FROM "Chat" WHERE "userId" = $1)::int AS chats`,
        [user.userId],
      );
      assert.deepEqual(rows[0], { attachments: 2, chats: 0 });

      // A tool's output counts too: a crop of the whole image would take the user past it.
      const crop = await fetch(`${gateway.url}/api/v1/tools/crop_image`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ attachmentId: attachments[0]?.id, x: 0, y: 0, width: 30, height: 30 }),
      });
      assert.equal(crop.status, 422);
      assert.equal(((await crop.json()) as { code: string }).code, 'LIMIT_REACHED');
      assert.equal(await storedFiles(user.userId), 2, 'no output stored');
      const balance = await db.pool.query<{ creditBalance: string }>(
        `SELECT "creditBalance"::text AS "creditBalance" FROM "User" WHERE id = $1`,
        [user.userId],
      );
      assert.equal(Number(balance.rows[0]?.creditBalance), 1_000_000, 'the failed call is not charged');
    });
  });
});
