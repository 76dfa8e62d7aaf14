import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logging/logger';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';

/** A pino destination that keeps every line in memory. */
function memoryStream() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

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

    const text = sink.text();
    for (const secret of [password, key, sessionToken, cookie])
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
