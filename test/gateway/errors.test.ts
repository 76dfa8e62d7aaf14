import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { apiKeyGuard } from '../../apps/gateway/middleware/auth';
import { errorHandler } from '../../apps/gateway/middleware/errors';

import { createTestUser, type TestUser } from '../../testkit/users';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

async function chatCount(userId: string): Promise<number> {
  const { db } = await testStack();
  return db.prisma.chat.count({ where: { userId } });
}

describe('error envelope', () => {
  let gateway: TestGateway;
  let user: TestUser;
  before(async () => {
    gateway = await startGateway();
    user = await createTestUser();
  });
  after(() => gateway.close());

  const postChat = (body: string | Buffer, contentType?: string) =>
    fetch(`${gateway.url}/api/v1/chats`, {
      method: 'POST',
      headers: { ...user.bearer, ...(contentType ? { 'content-type': contentType } : {}) },
      body,
    });

  it('answers malformed JSON with 400 INVALID_JSON, writing nothing', async () => {
    const res = await postChat('{"title": "unterminated', 'application/json');
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      error: 'The request body is not valid JSON.',
      code: 'INVALID_JSON',
    });
    assert.equal(await chatCount(user.userId), 0);
  });

  it('answers a JSON body over 1 MB with 413 PAYLOAD_TOO_LARGE, writing nothing', async () => {
    const res = await postChat(JSON.stringify({ title: 'x'.repeat(1024 * 1024 + 1) }), 'application/json');
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
    assert.equal(await chatCount(user.userId), 0);
  });

  it('answers a body of another content type with 415 UNSUPPORTED_MEDIA_TYPE, writing nothing', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await postChat('{"title":"sneaky"}', type);
      assert.equal(res.status, 415, type);
      assert.equal(((await res.json()) as { code: string }).code, 'UNSUPPORTED_MEDIA_TYPE');
    }
    const untyped = await postChat(Buffer.from('{"title":"sneaky"}'));
    assert.equal(untyped.status, 415);
    assert.equal(await chatCount(user.userId), 0);
  });

  it('accepts a JSON route without a body, and application/json with a charset', async () => {
    const empty = await fetch(`${gateway.url}/api/v1/chats`, { method: 'POST', headers: user.bearer });
    assert.equal(empty.status, 201);
    const charset = await postChat('{"title":"ok"}', 'application/json; charset=utf-8');
    assert.equal(charset.status, 201);
  });

  it('answers an unknown route with a JSON 404 NOT_FOUND', async () => {
    for (const path of ['/api/v1/nope', '/api/v2/chats', '/nope']) {
      const res = await fetch(`${gateway.url}${path}`, { headers: user.bearer });
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(await res.json(), { error: 'No such route.', code: 'NOT_FOUND' });
    }
  });

  it('answers a method a known path does not serve with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    const chatPath = '/api/v1/chats/00000000-0000-4000-8000-000000000000';
    for (const [method, path, allow] of [
      ['PUT', '/api/v1/chats', 'GET, HEAD, POST'],
      ['DELETE', '/api/v1/completions', 'POST'],
      ['POST', chatPath, 'DELETE, GET, HEAD, PATCH'],
    ] as const) {
      const res = await fetch(`${gateway.url}${path}`, { method, headers: user.bearer });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get('allow'), allow);
      assert.equal(((await res.json()) as { code: string }).code, 'METHOD_NOT_ALLOWED');
    }
    const trace = await rawRequest(gateway.url, 'TRACE', '/api/v1/chats');
    assert.match(trace, /^HTTP\/1\.1 405 /);
  });

  it('answers a path that is not valid percent-encoding with 400 INVALID_REQUEST, before any key is checked', async () => {
    for (const path of ['/api/v1/chats/%E0%A4%A', '/api/v1/chats/%E0/runs/%ZZ', '/files/%E0']) {
      const res = await fetch(`${gateway.url}${path}`);
      assert.equal(res.status, 400, path);
      // The answer does not echo the path back.
      assert.deepEqual(await res.json(), {
        error: 'The request path is not valid percent-encoding.',
        code: 'INVALID_REQUEST',
      });
    }
    const tool = await fetch(`${gateway.url}/api/v1/tools/%E0`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(tool.status, 404);
    assert.equal(((await tool.json()) as { code: string }).code, 'UNKNOWN_TOOL');
  });

  it('answers a form of more fields than it reads with 413 PAYLOAD_TOO_LARGE', async () => {
    const fields = Array.from({ length: 1_500 }, (_, i) => `f${i}=1`).join('&');
    const res = await fetch(`${gateway.url}/oauth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: fields,
    });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
  });

  it('refuses text PostgreSQL cannot store (a NUL, half of a character) with 400 INVALID_REQUEST, writing nothing', async () => {
    const chatsBefore = await chatCount(user.userId);
    const refused = async (res: Response, path: string) => {
      assert.equal(res.status, 400, path);
      const body = (await res.json()) as { code: string; details: { path: string }[] };
      assert.equal(body.code, 'INVALID_REQUEST');
      assert.deepEqual(
        body.details.map((d) => d.path),
        [path],
      );
    };
    const post = (path: string, body: unknown, headers: Record<string, string> = user.bearer) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        // JSON.stringify writes a lone surrogate as the escape "\ud800", valid JSON.
        body: JSON.stringify(body),
      });
    await refused(await post('/api/v1/completions', { text: 'a lone \ud800' }), 'body.text');
    await refused(
      await post('/api/v1/completions', { text: 'hi', image_urls: ['https://example.com/a\u0000.png'] }),
      'body.image_urls.0',
    );
    await refused(await post('/api/v1/chats', { title: 'half \udfff' }), 'body.title');
    // Refused at the route: not retried by the tool's workflow as if its provider failed.
    await refused(
      await post('/api/v1/tools/crop_image', {
        image_url: 'https://example.com/a\u0000.png',
        x: 0,
        y: 0,
        width: 1,
        height: 1,
      }),
      'body.image_url',
    );
    await refused(
      await post(
        '/api/webhook-endpoints',
        { url: 'https://example.com/\u0000', events: ['agent.completed'] },
        { cookie: user.cookie },
      ),
      'body.url',
    );
    assert.equal(await chatCount(user.userId), chatsBefore);

    // The OAuth sign-in form shows itself again, saying what to fix.
    const { client_id } = (await (
      await fetch(`${gateway.url}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'NUL', redirect_uris: ['http://127.0.0.1:9/callback'] }),
      })
    ).json()) as { client_id: string };
    const next = `/authorize?${new URLSearchParams({
      client_id,
      response_type: 'code',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    })}`;
    const signIn = await fetch(`${gateway.url}/oauth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=a%00b%40example.com&password=long-enough-password&next=${encodeURIComponent(next)}`,
    });
    assert.equal(signIn.status, 400);
    assert.match(await signIn.text(), /role="alert">Enter your email address and your password/);
    assert.equal(signIn.headers.get('set-cookie'), null);
  });

  it('answers a non-UUID id with 400 INVALID_REQUEST listing each problem', async () => {
    const res = await fetch(`${gateway.url}/api/v1/chats/123`, {
      method: 'PATCH',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ title: '' }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as {
      error: string;
      code: string;
      details: { path: string; message: string }[];
    };
    assert.equal(body.code, 'INVALID_REQUEST');
    assert.deepEqual(
      body.details.map((d) => d.path),
      ['params.chatId', 'body.title'],
    );
    for (const d of body.details) assert.ok(d.message.length > 0);
  });
});

describe('rate limits', () => {
  let gateway: TestGateway;
  before(async () => {
    const stack = await testStack();
    gateway = await startGateway({
      config: stack.config({ API_RATE_LIMIT_PER_MINUTE: '3', SEND_RATE_LIMIT_PER_MINUTE: '2' }),
    });
  });
  after(() => gateway.close());

  it('limits each user to API_RATE_LIMIT_PER_MINUTE, with RateLimit headers on every answer', async () => {
    const user = await createTestUser();
    const other = await createTestUser();
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('ratelimit-limit'), '3');
      assert.equal(res.headers.get('ratelimit-remaining'), String(2 - i));
      const reset = Number(res.headers.get('ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
    }
    const limited = await fetch(`${gateway.url}/api/v1/chats`, { method: 'POST', headers: user.bearer });
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { code: string }).code, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
    assert.equal(await chatCount(user.userId), 0);
    // The count is per user: another user is unaffected.
    assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: other.bearer })).status, 200);
  });

  it('holds the count in PostgreSQL, across gateway processes', async () => {
    const stack = await testStack();
    const twin = await startGateway({ config: stack.config({ API_RATE_LIMIT_PER_MINUTE: '3' }) });
    try {
      const user = await createTestUser();
      assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer })).status, 200);
      assert.equal((await fetch(`${twin.url}/api/v1/chats`, { headers: user.bearer })).status, 200);
      assert.equal((await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer })).status, 200);
      assert.equal((await fetch(`${twin.url}/api/v1/chats`, { headers: user.bearer })).status, 429);
    } finally {
      await twin.close();
    }
  });

  it('does not count a request whose key is refused', async () => {
    const user = await createTestUser();
    for (let i = 0; i < 4; i++)
      assert.equal(
        (await fetch(`${gateway.url}/api/v1/chats`, { headers: { authorization: 'Bearer nope' } })).status,
        401,
      );
    const res = await fetch(`${gateway.url}/api/v1/chats`, { headers: user.bearer });
    assert.equal(res.headers.get('ratelimit-remaining'), '2');
  });

  it('the send limit holds sends per user to SEND_RATE_LIMIT_PER_MINUTE', async () => {
    // A bare app with the guard counting only the send limit, so the API-wide one stays out of the way.
    const app = express();
    app.post('/send', apiKeyGuard(gateway.ops, [gateway.ops.limits.send]), (_req, res) => {
      res.status(202).json({ ok: true });
    });
    app.use(errorHandler(gateway.deps.logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const user = await createTestUser();
      const send = () => fetch(`http://127.0.0.1:${port}/send`, { method: 'POST', headers: user.bearer });
      const first = await send();
      assert.equal(first.status, 202);
      assert.equal(first.headers.get('ratelimit-limit'), '2');
      assert.equal(first.headers.get('ratelimit-remaining'), '1');
      assert.equal((await send()).status, 202);
      const limited = await send();
      assert.equal(limited.status, 429);
      assert.equal(((await limited.json()) as { code: string }).code, 'RATE_LIMITED');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** fetch refuses TRACE, so this one goes over a raw socket; answers the status line and headers. */
function rawRequest(base: string, method: string, path: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
