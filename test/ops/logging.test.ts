import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logging/logger';
import { temporalLogger } from '../../core/logging/temporal';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';
import { drawReply, startReceiver, startService, terminal, type Service } from './support';

/** A pino destination that keeps every line in memory. */
function memoryStream() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const text = () => chunks.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown> & { req?: { url?: string; method?: string } });
  return { stream, text, lines };
}

describe('logs', function () {
  this.timeout(120_000);

  describe('of a full run', () => {
    const gatewayLog = memoryStream();
    const workerLog = memoryStream();
    const model = new ScriptedModel([]);
    let service: Service;
    before(async () => {
      service = await startService({
        model,
        // The user signs up over HTTP, as a user does, and spends on an image.
        config: { CREDIT_GRANT_ON_SIGN_UP: '100' },
        gatewayDeps: { logger: createLogger({ level: 'trace', name: 'gateway' }, gatewayLog.stream) },
        workerDeps: { logger: createLogger({ level: 'trace', name: 'worker' }, workerLog.stream) },
      });
    });
    after(() => service.close());

    it('carry userId, chatId and runId where known, and no secret the run created', async () => {
      const url = service.gateway.url;
      const json = { 'content-type': 'application/json' };
      const email = `logs-${randomUUID()}@example.test`;
      const password = `pw-${randomUUID()}`;
      const signUp = await fetch(`${url}/api/auth/sign-up`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email, password }),
      });
      assert.equal(signUp.status, 201);
      const userId = ((await signUp.json()) as { user: { id: string } }).user.id;
      const signIn = await fetch(`${url}/api/auth/sign-in`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ email, password }),
      });
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const sessionToken = cookie.slice(cookie.indexOf('=') + 1);
      const session = { ...json, cookie, origin: url };
      const created = await fetch(`${url}/api/keys`, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({ name: 'logged' }),
      });
      const { key } = (await created.json()) as { key: string };
      // The receiver fails the first POST it gets, so the logs hold a retried delivery too.
      const receiver = await startReceiver(() => {
        receiver.status = receiver.posts.length === 1 ? 500 : 200;
      });
      const endpoint = await fetch(`${url}/api/webhook-endpoints`, {
        method: 'POST',
        headers: session,
        body: JSON.stringify({ url: receiver.url, events: ['agent.completed', 'tool.completed'] }),
      });
      assert.equal(endpoint.status, 201);
      const { secret } = (await endpoint.json()) as { secret: string };

      model.replies.push(drawReply(), { text: 'Here it is.', toolCalls: [] });
      const bearer = { ...json, authorization: `Bearer ${key}` };
      const sent = await fetch(`${url}/api/v1/completions`, {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ text: 'draw', planMode: true }),
      });
      assert.equal(sent.status, 202);
      const turn = (await sent.json()) as { chatId: string; runId: string };
      const snapshot = async () =>
        (await (
          await fetch(`${url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}`, { headers: bearer })
        ).json()) as { status: string; waitpoints: { id: string; status: string }[] };
      const waiting = await waitFor(
        async () => {
          const s = await snapshot();
          return s.waitpoints.find((w) => w.status === 'PENDING');
        },
        { what: 'the plan' },
      );
      const approved = await fetch(
        `${url}/api/v1/chats/${turn.chatId}/runs/${turn.runId}/waitpoints/${waiting.id}/complete`,
        { method: 'POST', headers: bearer, body: JSON.stringify({ approved: true }) },
      );
      assert.equal(approved.status, 202);
      await waitFor(async () => (terminal(await snapshot()) ? true : undefined), { what: 'the run' });
      await waitFor(async () => (receiver.posts.length >= 3 ? true : undefined), {
        what: 'both events delivered, one after a retry',
      });
      const signature = String(receiver.posts[0]?.headers['x-svc-signature'] ?? '');
      receiver.server.close();

      // No secret, in whatever form, on any line.
      const everything = gatewayLog.text() + workerLog.text();
      const appSecret = service.gateway.deps.config.APP_SECRET;
      const secrets = { password, key, sessionToken, cookie, secret, appSecret, signature };
      for (const [name, value] of Object.entries(secrets)) {
        assert.ok(value.length >= 8, `${name} was created`);
        assert.ok(!everything.includes(value), `the ${name} reached the logs`);
      }

      // Every request line of the run's routes names who and which run.
      const runLines = gatewayLog.lines().filter((l) => l.req?.url?.includes(turn.chatId));
      assert.ok(runLines.length >= 3);
      for (const line of runLines) {
        assert.equal(line.userId, userId, JSON.stringify(line));
        assert.equal(line.chatId, turn.chatId, JSON.stringify(line));
        if (line.req?.url?.includes(turn.runId)) assert.equal(line.runId, turn.runId, JSON.stringify(line));
      }
      const sendLine = gatewayLog
        .lines()
        .find(
          (l) =>
            l.req?.method === 'POST' && l.req.url === '/api/v1/completions' && l.msg === 'request completed',
        );
      assert.ok(sendLine, 'the send is logged');
      assert.equal(sendLine.chatId, turn.chatId, 'ids the send created');
      assert.equal(sendLine.runId, turn.runId);
      assert.equal(sendLine.userId, userId);

      // The worker's lines while it delivered: each attempt names the delivery, its user and its run.
      // An attempt is logged once it is recorded, a moment after its receiver had the POST.
      const attempts = await waitFor(
        async () => {
          const lines = workerLog.lines().filter((l) => l.msg === 'webhook attempt');
          return lines.length >= 3 ? lines : undefined;
        },
        { what: 'the three attempts logged' },
      );
      for (const line of attempts) {
        assert.equal(line.userId, userId, JSON.stringify(line));
        assert.equal(line.chatId, turn.chatId, JSON.stringify(line));
        assert.ok(typeof line.deliveryId === 'string');
        if (line.runId !== undefined) assert.equal(line.runId, turn.runId, JSON.stringify(line));
      }
      assert.ok(
        attempts.some((l) => l.runId === turn.runId),
        'the run’s events name it',
      );
    });
  });

  it('of the Temporal SDK go through pino, from the chosen level, with Temporal’s runId apart from ours', () => {
    const sink = memoryStream();
    const sdk = temporalLogger(createLogger({ level: 'trace', name: 'worker' }, sink.stream), 'WARN');
    sdk.info('bundle built', { sdkComponent: 'worker' });
    sdk.warn('activation failed', {
      runId: 'temporal-run',
      agentRunId: 'agent-run',
      workflowId: 'chat-1',
      error: new Error('boom'),
    });
    const lines = sink.lines();
    assert.equal(lines.length, 1, 'below WARN is dropped');
    const line = lines[0] as Record<string, unknown> & { err?: { message: string } };
    assert.equal(line.level, 40);
    assert.equal(line.component, 'temporal');
    assert.equal(line.msg, 'activation failed');
    assert.equal(line.runId, 'agent-run');
    assert.equal(line.temporalRunId, 'temporal-run');
    assert.equal(line.err?.message, 'boom');
  });
});
