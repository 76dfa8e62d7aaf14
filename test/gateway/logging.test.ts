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
  before(async () => {
    const stack = await testStack();
    const config = stack.config({ LOG_LEVEL: 'info' });
    gateway = await startGateway({
      config,
      deps: { logger: createLogger({ level: 'info', name: 'gateway-log-test' }, sink.stream) },
    });
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
    assert.equal((await send('/api/v1/chats', { headers: { authorization: `Bearer ${key}` } })).status, 200);
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
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { req?: { id?: string } });
    assert.ok(lines.length >= requestIds.length);
    for (const line of lines) assert.ok(line.req?.id, `line without a request id: ${JSON.stringify(line)}`);
    const logged = new Set(lines.map((l) => l.req?.id));
    for (const id of requestIds) assert.ok(logged.has(id), `request ${id} not logged`);
  });
});
