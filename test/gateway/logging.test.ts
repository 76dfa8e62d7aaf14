import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../core/logging/logger';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { memoryStream } from '../support/log-sink';
import { waitFor } from '../support/wait';

/** A pino destination that keeps every line in memory. */
describe('request logging', () => {
  let gateway: TestGateway;
  const sink = memoryStream();
  // Where the requests' lines start: what the gateway logs as it starts belongs to no request.
  let started = 0;
  before(async () => {
    const stack = await testStack();
    const config = stack.config({ LOG_LEVEL: 'info' });
    gateway = await startGateway({
      config,
      deps: { logger: createLogger({ level: 'info', name: 'gateway-log-test' }, sink.stream) },
    });
    started = sink.text().length;
  });
  after(() => gateway.close());

  it('logs every request with its id and never a password, API key, session token or cookie', async () => {
    const email = `log-${randomUUID()}@example.test`;
    const password = `pw-${randomUUID()}`;
    const json = { 'content-type': 'application/json' };
    const requestIds: string[] = [];
    const send = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${gateway.url}${path}`, init);
      const id = res.headers.get('x-request-id');
      assert.match(id ?? '', /^[\w.-]+$/, `x-request-id on ${path}`);
      requestIds.push(id as string);
      return res;
    };

    const signUp = await send('/api/auth/sign-up', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password }),
    });
    assert.equal(signUp.status, 201);
    const signIn = await send('/api/auth/sign-in', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password }),
    });
    assert.equal(signIn.status, 200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const sessionToken = cookie.slice('svc_session='.length);
    assert.ok(sessionToken.length > 20);
    const created = await send('/api/keys', {
      method: 'POST',
      headers: { ...json, cookie },
      body: JSON.stringify({ name: 'logged' }),
    });
    assert.equal(created.status, 201);
    const { key } = (await created.json()) as { key: string };
    const listed = await send('/api/v1/chats', { headers: { authorization: `Bearer ${key}` } });
    assert.equal(listed.status, 200);
    // A poll that found nothing new is logged at debug only: at info it leaves no line.
    const unchanged = await fetch(`${gateway.url}/api/v1/chats`, {
      headers: { authorization: `Bearer ${key}`, 'if-none-match': listed.headers.get('etag') ?? '' },
    });
    assert.equal(unchanged.status, 304);
    const unchangedId = unchanged.headers.get('x-request-id') ?? '';
    const wrong = await send('/api/auth/sign-in', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email, password: `${password}-wrong` }),
    });
    assert.equal(wrong.status, 401);
    // A caller-supplied request id is kept, so a client can correlate its own logs.
    const traced = await send('/api/auth/session', {
      headers: { cookie, 'x-request-id': 'client-chosen.id-1' },
    });
    assert.equal(traced.headers.get('x-request-id'), 'client-chosen.id-1');
    // A signed file URL's sig is a credential for that file.
    const upload = new FormData();
    upload.append(
      'file',
      new Blob([Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1')]),
      'pixel.gif',
    );
    const uploaded = await send('/api/v1/uploads', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: upload,
    });
    assert.equal(uploaded.status, 201);
    const fileUrl = ((await uploaded.json()) as { attachments: { url: string }[] }).attachments[0]?.url ?? '';
    const sig = new URL(fileUrl).searchParams.get('sig') ?? '';
    assert.ok(sig.length > 20);
    const file = await send(new URL(fileUrl).pathname + new URL(fileUrl).search);
    assert.equal(file.status, 200);
    // Read to the end: the request's log line is written when its answer has gone, which on a busy
    // machine may be a moment after the client has the last byte.
    await file.arrayBuffer();
    const text = await waitFor(
      async () => {
        const t = sink.text();
        return requestIds.every((id) => t.includes(id)) ? t : undefined;
      },
      { what: 'every request logged' },
    );
    for (const secret of [password, key, sessionToken, cookie, sig])
      assert.ok(!text.includes(secret), `a secret reached the log`);

    const lines = text
      .slice(started)
      .split('\n')
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            requestId?: string;
            msg?: string;
            userId?: string;
            code?: string;
            req?: { method?: string; url?: string };
            res?: { statusCode?: number };
          },
      );
    assert.ok(lines.length >= requestIds.length);
    for (const line of lines) assert.ok(line.requestId, `line without a request id: ${JSON.stringify(line)}`);
    const logged = new Set(lines.map((l) => l.requestId));
    for (const id of requestIds) assert.ok(logged.has(id), `request ${id} not logged`);
    assert.ok(!logged.has(unchangedId), 'a 304 logged at info');

    // The request's own line: what was asked, what was answered, and who asked.
    const session = lines.filter((l) => l.requestId === 'client-chosen.id-1');
    assert.equal(session.length, 1, JSON.stringify(session));
    assert.equal(session[0]?.msg, 'request completed');
    assert.deepEqual(
      [session[0]?.req?.method, session[0]?.req?.url, session[0]?.res?.statusCode],
      ['GET', '/api/auth/session', 200],
    );
    assert.ok(session[0]?.userId, 'the caller named on its line');
    // A refused call: the error's line and the request's, both under its id.
    const refused = lines.filter((l) => l.requestId === requestIds[4]);
    assert.deepEqual(
      refused.map((l) => (l.msg === 'request completed' ? l.res?.statusCode : l.code)),
      ['UNAUTHORIZED', 401],
      JSON.stringify(refused),
    );
  });
});
