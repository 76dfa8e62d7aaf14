/**
 * Hostile input across the whole surface: another tenant's ids on every id route, the SSRF corpus
 * on every URL input, a slow-loris client, odd multipart field names, and secrets at rest.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { hashToken } from '../../core/auth/tokens';
import type { Config } from '../../core/config/config';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { atSuiteEnd } from '../support/hooks';
import { testStack } from '../../testkit/stack';
import { waitFor } from '../support/wait';
import { startWorker, type TestWorker } from '../../testkit/worker';

/** Every private, loopback, link-local or otherwise internal form a user URL may take. */
const SSRF_CORPUS = [
  'http://127.0.0.1:PORT/x.png',
  'http://localhost:PORT/x.png',
  'http://[::1]:PORT/x.png',
  'http://[::ffff:127.0.0.1]:PORT/x.png',
  'http://[::ffff:7f00:1]:PORT/x.png',
  'http://2130706433:PORT/x.png',
  'http://0x7f000001:PORT/x.png',
  'http://0177.0.0.1:PORT/x.png',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/x.png',
  'http://100.64.0.1/x.png',
  'http://0.0.0.0:PORT/x.png',
  'http://user@127.0.0.1:PORT/x.png',
];

describe('abuse cases', function () {
  this.timeout(120_000);
  let config: Config;
  let gateway: TestGateway;
  let worker: TestWorker;
  let storageDir: string;
  let canary: { server: Server; port: number; hits: number };
  let owner: TestUser;
  let intruder: TestUser;

  before(async () => {
    const stack = await testStack();
    storageDir = await mkdtemp(path.join(tmpdir(), 'abuse-'));
    // The guard is on: user URLs may not reach private addresses, webhooks must be https.
    config = stack.config({
      STORAGE_LOCAL_DIR: storageDir,
      ALLOW_PRIVATE_NETWORK_URLS: 'false',
      ALLOW_INSECURE_WEBHOOKS: 'false',
      MODEL_PROVIDER: 'local',
      IMAGE_PROVIDER: 'local-preview',
      PLAN_APPROVAL_TIMEOUT: '10m',
      HTTP_HEADERS_TIMEOUT: '1s',
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
    const server = createServer((_req, res) => {
      canary.hits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    canary = { server, port: (server.address() as AddressInfo).port, hits: 0 };
    owner = await createTestUser();
    intruder = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
    canary?.server.close();
    await rm(storageDir, { recursive: true, force: true });
  });

  const call = async (
    who: TestUser,
    auth: 'apiKey' | 'session',
    method: string,
    url: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${gateway.url}${url}`, {
      method,
      headers: {
        ...(auth === 'apiKey' ? who.bearer : { cookie: who.cookie }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  describe('another tenant’s ids', () => {
    it('answers 404 on every route that takes an id, and changes nothing', async () => {
      const { db } = await testStack();
      // The owner's things: a chat whose run waits on a plan, a key, an endpoint with a delivery, a file.
      const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#123' } })
        .png()
        .toBuffer();
      const form = new FormData();
      form.append('file', new Blob([png]), 'mine.png');
      const uploaded = await fetch(`${gateway.url}/api/v1/uploads`, {
        method: 'POST',
        headers: owner.bearer,
        body: form,
      });
      assert.equal(uploaded.status, 201);
      const attachmentId = ((await uploaded.json()) as { attachments: { id: string }[] }).attachments[0]
        ?.id as string;
      const endpoint = await db.pool.query<{ id: string }>(
        `INSERT INTO "WebhookEndpoint" (id, "userId", url, events, "secretEncrypted")
         VALUES (gen_random_uuid(), $1, 'https://hooks.example.test/x', '{agent.started}', 'v1.x.x.x') RETURNING id`,
        [owner.userId],
      );
      const endpointId = endpoint.rows[0]?.id as string;
      const delivery = await db.pool.query<{ id: string }>(
        `INSERT INTO "WebhookDelivery" (id, "endpointId", event, "idempotencyKey", "envelopeId", payload, status, "updatedAt")
         VALUES (gen_random_uuid(), $1, 'agent.started', 'k', 'wh:x', '{}', 'FAILED', now()) RETURNING id`,
        [endpointId],
      );
      const deliveryId = delivery.rows[0]?.id as string;
      // An MCP client the owner connected by OAuth.
      const clientId = `client-${owner.userId}`;
      await db.pool.query(`INSERT INTO "OAuthClient" (id, metadata) VALUES ($1, '{}')`, [clientId]);
      const grant = await db.pool.query<{ id: string }>(
        `INSERT INTO "OAuthGrant" (id, "userId", "clientId", "clientName", "accessTokenHash", "accessExpiresAt",
                                   "refreshTokenHash", "refreshExpiresAt")
         VALUES (gen_random_uuid(), $1, $2, 'assistant', $3, now() + interval '1 hour', $4, now() + interval '1 day')
         RETURNING id`,
        [owner.userId, clientId, `a-${clientId}`, `r-${clientId}`],
      );
      const grantId = grant.rows[0]?.id as string;
      const turn = await call(owner, 'apiKey', 'POST', '/api/v1/completions', {
        text: 'crop this to the left half',
        attachmentIds: [attachmentId],
        planMode: true,
      });
      assert.equal(turn.status, 202);
      const chatId = turn.body.chatId as string;
      const runId = turn.body.runId as string;
      const waitpointId = await waitFor(
        async () =>
          (await db.pool.query<{ id: string }>(`SELECT id FROM "Waitpoint" WHERE "runId" = $1`, [runId]))
            .rows[0]?.id,
        { what: 'the owner’s plan waitpoint' },
      );
      const messageId = (
        await db.pool.query<{ id: string }>(
          `SELECT id FROM "Message" WHERE "chatId" = $1 AND role = 'user' LIMIT 1`,
          [chatId],
        )
      ).rows[0]?.id as string;
      const ids: Record<string, string> = {
        chatId,
        runId,
        messageId,
        waitpointId,
        keyId: owner.apiKeyId,
        endpointId,
        deliveryId,
        grantId,
      };
      const bodies: Record<string, unknown> = {
        'PATCH /api/v1/chats/:chatId': { title: 'taken over' },
        'POST /api/v1/chats/:chatId/runs/:runId/waitpoints/:waitpointId/complete': { approved: true },
        'POST /api/v1/chats/:chatId/fork': { messageId },
      };
      const snapshot = async () =>
        JSON.stringify(
          await Promise.all([
            db.pool.query(`SELECT title, "deletedAt" FROM "Chat" WHERE id = $1`, [chatId]),
            db.pool.query(`SELECT status FROM "Run" WHERE id = $1`, [runId]),
            db.pool.query(`SELECT status FROM "Waitpoint" WHERE id = $1`, [waitpointId]),
            db.pool.query(`SELECT "revokedAt" FROM "ApiKey" WHERE id = $1`, [owner.apiKeyId]),
            db.pool.query(`SELECT "deletedAt" FROM "WebhookEndpoint" WHERE id = $1`, [endpointId]),
            db.pool.query(`SELECT status, series FROM "WebhookDelivery" WHERE id = $1`, [deliveryId]),
            db.pool.query(`SELECT "revokedAt" FROM "OAuthGrant" WHERE id = $1`, [grantId]),
            // A regenerate would add a run to the chat, a fork a chat of the intruder's.
            db.pool.query(`SELECT count(*) FROM "Run" WHERE "chatId" = $1`, [chatId]),
            db.pool.query(`SELECT count(*) FROM "Chat" WHERE "userId" = $1`, [intruder.userId]),
          ]).then((results) => results.map((r) => r.rows)),
        );
      const before = await snapshot();

      // Every route whose path names one of the caller's things; the tool name and the signed file
      // key and the reference page's asset names are not tenant ids; the console's mirror of the
      // public routes is the same handlers behind the session (test/console/session-routes). A new
      // id route fails here until it is probed.
      const idRoutes = gateway.routes.routes.filter(
        (r) =>
          /:(?!toolName)\w+/.test(r.path) &&
          !r.path.startsWith('/files/') &&
          !r.path.startsWith('/docs/') &&
          !r.path.startsWith('/console/'),
      );
      const probed: string[] = [];
      for (const route of idRoutes) {
        const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
        for (const p of params) assert.ok(ids[p], `no probe id for :${p} in ${route.path}`);
        const url = route.path.replace(/:(\w+)/g, (_, p: string) => ids[p] as string);
        const key = `${route.method.toUpperCase()} ${route.path}`;
        const auth = route.path.startsWith('/api/v1/') ? 'apiKey' : 'session';
        const res = await call(
          intruder,
          auth,
          route.method.toUpperCase(),
          url,
          bodies[key] ?? (route.method === 'get' || route.method === 'delete' ? undefined : {}),
        );
        assert.equal(res.status, 404, `${key} answered ${res.status} ${JSON.stringify(res.body)}`);
        probed.push(key);
      }
      // Ids in bodies: an attachment of the owner's, in a turn and in a crop.
      const send = await call(intruder, 'apiKey', 'POST', '/api/v1/completions', {
        text: 'mine now',
        attachmentIds: [attachmentId],
      });
      assert.equal(send.status, 404);
      assert.equal(send.body.code, 'ATTACHMENT_NOT_FOUND');
      const crop = await call(intruder, 'apiKey', 'POST', '/api/v1/tools/crop_image', {
        attachmentId,
        x: 0,
        y: 0,
        width: 1,
        height: 1,
      });
      assert.equal(crop.status, 404);
      assert.equal(crop.body.code, 'ATTACHMENT_NOT_FOUND');

      assert.equal(await snapshot(), before, 'nothing of the owner’s changed');
      assert.equal(
        (await call(owner, 'apiKey', 'GET', `/api/v1/chats/${chatId}`)).status,
        200,
        'the owner’s key still works',
      );
      assert.ok(probed.length >= 10, `probed ${probed.length} routes: ${probed.join(', ')}`);
      await call(owner, 'apiKey', 'POST', `/api/v1/chats/${chatId}/runs/${runId}/cancel`, {});
    });
  });

  describe('the SSRF corpus', () => {
    const corpus = () => SSRF_CORPUS.map((u) => u.replace('PORT', String(canary.port)));
    let assistant: Client;
    before(async () => {
      assistant = new Client({ name: 'abuse-test', version: '1.0.0' });
      await assistant.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
          requestInit: { headers: intruder.bearer },
        }),
      );
      await assistant.listTools();
    });
    after(() => assistant?.close());
    /** The same work over MCP: its tool result's envelope. */
    const mcpCall = async (name: string, args: unknown) => {
      const result = (await assistant.callTool({
        name,
        arguments: args as Record<string, unknown>,
      })) as CallToolResult;
      assert.equal(result.isError, true, `${name}: ${JSON.stringify(result.structuredContent)}`);
      return result.structuredContent as { code: string; details?: unknown };
    };

    it('refuses every internal address on every tool URL input, over REST and MCP, fetching nothing', async () => {
      const before = canary.hits;
      for (const url of corpus()) {
        const inputs: [string, unknown][] = [
          ['crop_image', { image_url: url, x: 0, y: 0, width: 1, height: 1 }],
          ['ai_image_2', { prompt: 'a cat', image_url: url }],
          ['merge_videos', { video_urls: [url, url] }],
        ];
        for (const [tool, body] of inputs) {
          const res = await call(intruder, 'apiKey', 'POST', `/api/v1/tools/${tool}`, body);
          assert.ok(
            res.status >= 400 && res.status < 500,
            `${tool} ${url}: ${res.status} ${JSON.stringify(res.body)}`,
          );
          assert.equal((await mcpCall(tool, body)).code, res.body.code, `${tool} ${url} over MCP`);
        }
      }
      assert.equal(canary.hits, before, 'no request reached the internal server');
    });

    it('refuses every internal address as a webhook endpoint', async () => {
      for (const url of corpus()) {
        const res = await call(intruder, 'session', 'POST', '/api/webhook-endpoints', {
          url: url.replace(/^http:/, 'https:'),
          events: ['agent.completed'],
        });
        assert.equal(res.status, 400, `${url}: ${res.status}`);
      }
      const { db } = await testStack();
      const { rows } = await db.pool.query(`SELECT 1 FROM "WebhookEndpoint" WHERE "userId" = $1`, [
        intruder.userId,
      ]);
      assert.equal(rows.length, 0);
    });

    it('refuses every internal address as an image_url of a turn at admission, over REST and MCP, writing nothing', async () => {
      const before = canary.hits;
      const { db } = await testStack();
      const count = async () =>
        (
          await db.pool.query(
            `SELECT 1 FROM "Message" m JOIN "Chat" c ON c.id = m."chatId" WHERE c."userId" = $1`,
            [intruder.userId],
          )
        ).rows.length;
      const messages = await count();
      for (const url of corpus()) {
        const turn = await call(intruder, 'apiKey', 'POST', '/api/v1/completions', {
          text: 'crop this to the left half',
          image_urls: ['https://93.184.215.14/fine.png', url],
        });
        assert.equal(turn.status, 400, `${url}: ${turn.status}`);
        assert.equal(turn.body.code, 'INVALID_REQUEST');
        assert.deepEqual(turn.body.details, [
          { path: 'body.image_urls.1', message: 'must point at a public address' },
        ]);
        const overMcp = await mcpCall('send_message', {
          text: 'crop this to the left half',
          image_urls: ['https://93.184.215.14/fine.png', url],
        });
        assert.equal(overMcp.code, 'INVALID_REQUEST');
        assert.deepEqual(overMcp.details, [
          { path: 'arguments.image_urls.1', message: 'must point at a public address' },
        ]);
      }
      assert.equal(await count(), messages);
      assert.equal(canary.hits, before);
    });

    it('tells a client nothing about why a host was refused: private and unresolvable read the same', async () => {
      const answers = [];
      for (const url of ['https://10.0.0.1/hook', 'https://no-such-host.invalid/hook']) {
        const res = await call(intruder, 'session', 'POST', '/api/webhook-endpoints', {
          url,
          events: ['agent.completed'],
        });
        assert.equal(res.status, 400);
        answers.push(res.body);
      }
      assert.deepEqual(answers[0], answers[1]);
    });
  });

  it('closes a slow-loris connection once HTTP_HEADERS_TIMEOUT (1 s here) has passed', async () => {
    const { port } = new URL(gateway.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    // One header line every 200 ms, never the blank line that would end them.
    const drip = setInterval(() => socket.write(`X-Slow-${Date.now()}: 1\r\n`), 200);
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(drip);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 5_000, `closed after ${elapsed} ms`);
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('refuses files in nested, array-style or unknown field names, storing nothing', async () => {
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    for (const field of ['files[0]', 'file[a]', 'file.x', 'upload']) {
      const form = new FormData();
      form.append(field, new Blob([png]), 'x.png');
      const res = await fetch(`${gateway.url}/api/v1/uploads`, {
        method: 'POST',
        headers: intruder.bearer,
        body: form,
      });
      assert.equal(res.status, 400, field);
    }
    const { db } = await testStack();
    const { rows } = await db.pool.query(`SELECT 1 FROM "Attachment" WHERE "userId" = $1`, [intruder.userId]);
    assert.equal(rows.length, 0, 'nothing stored');
  });

  it('keeps no plaintext key, session token, webhook secret or password in the database', async () => {
    const email = `secrets-${Date.now()}@example.test`;
    const password = 'a password nobody may read back';
    const signUp = await fetch(`${gateway.url}/api/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    assert.equal(signUp.status, 201);
    const signIn = await fetch(`${gateway.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const sessionToken = cookie.split('=')[1] as string;
    const key = await fetch(`${gateway.url}/api/keys`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'dump check' }),
    });
    const apiKey = ((await key.json()) as { key: string }).key;
    const endpoint = await fetch(`${gateway.url}/api/webhook-endpoints`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://93.184.215.14/in', events: ['agent.completed'] }),
    });
    assert.equal(endpoint.status, 201);
    const secret = ((await endpoint.json()) as { secret: string }).secret;
    const plaintexts = { password, sessionToken, apiKey, secret, testKey: owner.apiKey };
    for (const value of Object.values(plaintexts)) assert.ok(value && value.length > 20);

    const check = async () => {
      const dump = await dumpDatabase();
      for (const [name, value] of Object.entries(plaintexts))
        assert.ok(!dump.includes(value), `${name} in the dump`);
      // The hashes are there: the rows were dumped, not missed.
      assert.ok(dump.includes(hashToken(apiKey)), 'the key’s hash is in the dump');
    };
    await check();
    // Again once every test has run, over everything the suite wrote.
    atSuiteEnd('secrets at rest', check);
  });
});

/** Every row of every table of the test database, as text: what a dump would hold. */
async function dumpDatabase(): Promise<string> {
  const { db } = await testStack();
  const { rows: tables } = await db.pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await db.pool.query<{ row: string }>(`SELECT t::text AS row FROM "${name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}
