import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import prettier from 'prettier';
import { createAgentChatClient, verifyWebhook, type RunEvent } from '../../clients/typescript/src';
import { canonicalHash } from '../../core/hashing/canonical';
import { webhookHeaders } from '../../core/webhooks/signing';
import type { TestGateway } from '../../testkit/gateway';
import type { TestUser } from '../../testkit/users';
import { ScriptedModel } from '../support/scripted-model';
import { startService, type TestService } from '../support/service';
import { waitFor } from '../support/wait';

const PACKAGE_DIR = path.join(__dirname, '../../clients/typescript');
const SCHEMA_FILE = path.join(PACKAGE_DIR, 'src/schema.ts');
const VERSION_FILE = path.join(PACKAGE_DIR, 'src/version.ts');
const GENERATED =
  '// Generated from GET /api/v1/openapi.json; do not edit.\n' +
  '// Regenerate: UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts\n';

const formatted = async (source: string, file: string) =>
  prettier.format(source, { ...(await prettier.resolveConfig(file)), filepath: file });

/** The client's types, generated from the served document exactly as the committed file was. */
async function generatedSchema(document: unknown): Promise<string> {
  // A member with a default is optional to send: the server fills it in (image_urls, planMode, …).
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { defaultNonNullable: false });
  return formatted(GENERATED + astToString(ast), SCHEMA_FILE);
}

/**
 * Which document the client was generated from: its `info.version`, and the SHA-256 of its
 * canonical JSON without `servers` (the one part that names where it was served from).
 */
async function generatedVersion(document: { info: { version: string }; servers?: unknown }): Promise<string> {
  const { servers: _where, ...served } = document;
  return formatted(
    GENERATED +
      '/**\n' +
      ' * The OpenAPI document this client was generated from: `info.version`, and the SHA-256 (hex) of\n' +
      ' * its canonical JSON (keys sorted, no spaces) without `servers`, as this repository serves it.\n' +
      ' */\n' +
      `export const API_DOCUMENT = { version: ${JSON.stringify(document.info.version)}, sha256: ${JSON.stringify(canonicalHash(served))} } as const;\n`,
    VERSION_FILE,
  );
}

const run = promisify(execFile);
/** A command on the Node running this test (24), as a user's shell would run it; its output on failure. */
const inShell = (command: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
  run(command, args, {
    cwd,
    env: {
      ...process.env,
      ...env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: Error & { stdout?: string; stderr?: string }) => {
    err.message += `\n${err.stdout ?? ''}${err.stderr ?? ''}`;
    throw err;
  });

describe('the TypeScript client (clients/typescript)', function () {
  this.timeout(90_000);
  let gateway: TestGateway;
  let user: TestUser;
  const model = new ScriptedModel([]);
  let service: TestService;
  before(async () => {
    service = await startService('client', model);
    ({ gateway, user } = service);
  });
  after(() => service.stop());

  it('has the types and the version of the served document, to the byte (UPDATE_CLIENT=1 rewrites them)', async () => {
    const document = (await (await fetch(`${gateway.url}/api/v1/openapi.json`)).json()) as {
      info: { version: string };
    };
    for (const [file, fresh] of [
      [SCHEMA_FILE, await generatedSchema(document)],
      [VERSION_FILE, await generatedVersion(document)],
    ] as const) {
      if (process.env.UPDATE_CLIENT === '1') await writeFile(file, fresh);
      const committed = await readFile(file, 'utf8').catch(() => '');
      assert.ok(
        committed === fresh,
        `clients/typescript/src/${path.basename(file)} differs from the document: run UPDATE_CLIENT=1 npx mocha test/clients/typescript.test.ts`,
      );
    }
  });

  describe('installed from its packed tarball into an empty folder', function () {
    // npm pack builds it (prepack), and npm install fetches its dependency from the registry.
    this.timeout(300_000);
    let project: string;
    let packed: string;

    before(async () => {
      project = await mkdtemp(path.join(tmpdir(), 'client-user-'));
      packed = await mkdtemp(path.join(tmpdir(), 'client-packed-'));
      await inShell('npm', ['pack', '--pack-destination', packed], PACKAGE_DIR);
      const [tarball] = await readdir(packed);
      assert.match(tarball ?? '', /^agent-chat-client-\d+\.\d+\.\d+\.tgz$/);
      await writeFile(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'a-user-of-the-client', private: true, type: 'module' }),
      );
      await inShell(
        'npm',
        ['install', '--no-audit', '--no-fund', '--prefer-offline', path.join(packed, tarball!)],
        project,
      );
    });
    after(async () => {
      await rm(project, { recursive: true, force: true });
      await rm(packed, { recursive: true, force: true });
    });

    const userEnv = () => ({ BASE_URL: gateway.url, API_KEY: user.apiKey });

    it('holds its built JavaScript and types, and no TypeScript source', async () => {
      const installed = path.join(project, 'node_modules/@agent-chat/client');
      const files = await readdir(installed, { recursive: true });
      for (const file of [
        'dist/esm/index.js',
        'dist/esm/index.d.ts',
        'dist/cjs/index.js',
        'dist/cjs/index.d.ts',
      ])
        assert.ok(files.includes(file), `${file} is in the package`);
      assert.deepEqual(
        files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')),
        [],
      );
    });

    it('works from plain Node ESM: the first call of the README', async () => {
      model.replies.push({ text: 'Hello from an ES module.', toolCalls: [] });
      await writeFile(
        path.join(project, 'first-call.mjs'),
        `import { createAgentChatClient, API_DOCUMENT } from '@agent-chat/client';
const client = createAgentChatClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
const run = await client.sendAndWait({ text: 'hello' });
const { data } = await client.api.GET('/api/v1/chats');
console.log(JSON.stringify({ status: run.status, text: run.text, chats: data.data.length, api: API_DOCUMENT }));
`,
      );
      const { stdout } = await inShell(process.execPath, ['first-call.mjs'], project, userEnv());
      const said = JSON.parse(stdout) as {
        status: string;
        text: string;
        chats: number;
        api: { version: string };
      };
      assert.equal(said.status, 'COMPLETE');
      assert.equal(said.text, 'Hello from an ES module.');
      assert.ok(said.chats >= 1);
      assert.equal(said.api.version, '1.0.0');
    });

    it('works from plain Node CommonJS', async () => {
      model.replies.push({ text: 'Hello from CommonJS.', toolCalls: [] });
      await writeFile(
        path.join(project, 'first-call.cjs'),
        `const { createAgentChatClient, AgentChatError } = require('@agent-chat/client');
const client = createAgentChatClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });
(async () => {
  const run = await client.sendAndWait({ text: 'hello' });
  const refused = await client.getRun({ chatId: run.chatId, runId: '00000000-0000-4000-8000-000000000000' }).catch((e) => e);
  console.log(JSON.stringify({ status: run.status, text: run.text, refused: refused instanceof AgentChatError && refused.body.code }));
})();
`,
      );
      const { stdout } = await inShell(process.execPath, ['first-call.cjs'], project, userEnv());
      assert.deepEqual(JSON.parse(stdout), {
        status: 'COMPLETE',
        text: 'Hello from CommonJS.',
        refused: 'RUN_NOT_FOUND',
      });
    });

    it('type-checks a TypeScript user of it, as ES module and as CommonJS, and refuses a wrong call', async () => {
      const use = (
        flavour: string,
      ) => `import { createAgentChatClient, type RunSnapshot } from '@agent-chat/client';
const client = createAgentChatClient({ baseUrl: 'http://localhost:3000', apiKey: 'svck_live_…' });
export async function firstCall(): Promise<RunSnapshot['status']> {
  const run = await client.sendAndWait({ text: 'hello from ${flavour}' });
  const { data } = await client.api.GET('/api/v1/chats/{chatId}/runs/{runId}', {
    params: { path: { chatId: run.chatId, runId: run.id } },
  });
  return data?.status ?? run.status;
}
`;
      await writeFile(path.join(project, 'esm.mts'), use('ESM'));
      await writeFile(path.join(project, 'cjs.cts'), use('CommonJS'));
      await writeFile(
        path.join(project, 'wrong.mts'),
        `import { createAgentChatClient } from '@agent-chat/client';
const client = createAgentChatClient({ baseUrl: 'http://localhost:3000', apiKey: 'k' });
await client.send({ txt: 'a typo' });
`,
      );
      // The user's TypeScript and Node types: this repository's pinned ones stand in for them.
      const tsc = require.resolve('typescript/bin/tsc');
      const options = [
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--target',
        'es2022',
        '--typeRoots',
        path.join(__dirname, '../../node_modules/@types'),
        '--types',
        'node',
      ];
      // One run over all three: the two uses compile, and the typo is the one error.
      const said = await inShell(
        process.execPath,
        [tsc, ...options, 'esm.mts', 'cjs.cts', 'wrong.mts'],
        project,
      ).then(
        () => '',
        (err: { stdout: string }) => err.stdout,
      );
      const errors = said.split('\n').filter((line) => /error TS\d+/.test(line));
      assert.equal(errors.length, 1, said);
      assert.match(errors[0] ?? '', /^wrong\.mts.*'txt' does not exist/);
    });
  });

  it('sends with an Idempotency-Key and waits for the answer over the live stream', async () => {
    const sent: Headers[] = [];
    const client = createAgentChatClient({
      baseUrl: gateway.url,
      apiKey: user.apiKey,
      fetch: (input, init) => {
        sent.push(new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)));
        return fetch(input, init);
      },
    });
    model.replies.push({ text: 'Streamed to the client.', toolCalls: [] });
    const events: RunEvent[] = [];
    const run = await client.sendAndWait({ text: 'hello' }, { onEvent: (e) => events.push(e) });
    assert.equal(run.status, 'COMPLETE');
    assert.equal(run.text, 'Streamed to the client.');
    assert.equal(events[0]?.event, 'snapshot');
    assert.deepEqual([events.at(-1)?.event, events.at(-1)?.data.status], ['status', 'COMPLETE']);
    assert.match(sent[0]?.get('idempotency-key') ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(
      sent.some((h) => h.get('accept') === 'text/event-stream'),
      'it followed the stream',
    );

    // Any operation, typed: the chat the send created is listed.
    const { data } = await client.api.GET('/api/v1/chats/{chatId}', {
      params: { path: { chatId: run.chatId } },
    });
    assert.equal(data?.id, run.chatId);
  });

  it('follows a chat with streamChat, resumed after a cut connection where it left off', async () => {
    const opened: (string | null)[] = [];
    const client = createAgentChatClient({
      baseUrl: gateway.url,
      apiKey: user.apiKey,
      // The first connection to the chat's stream is cut after its first chunk, as a network would.
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (!String(input).endsWith('/events')) return res;
        opened.push(new Headers(init?.headers).get('last-event-id'));
        if (opened.length > 1 || !res.body) return res;
        const reader = res.body.getReader();
        const cut = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { value } = await reader.read();
            if (value) controller.enqueue(value);
            await reader.cancel();
            controller.error(new TypeError('network connection lost'));
          },
        });
        return new Response(cut, { status: res.status, headers: res.headers });
      },
    });
    model.holdAtStart();
    model.replies.push({ text: 'Followed in the chat.', toolCalls: [] });
    const turn = await client.send({ text: 'follow the chat' });
    const events: RunEvent[] = [];
    let released = false;
    for await (const event of client.streamChat(turn.chatId)) {
      events.push(event);
      if (!released) {
        released = true;
        model.release();
      }
      const data = event.data as { runId?: string; data?: { status?: string } };
      if (event.event === 'status' && data.runId === turn.runId && data.data?.status === 'COMPLETE') break;
    }
    assert.equal(events[0]?.event, 'snapshot');
    assert.deepEqual(opened, [null, String(events[0]?.id)], 'reopened once, after the snapshot');
    const text = events
      .filter((e) => e.event === 'text.delta')
      .map((e) => (e.data as { data: { text: string } }).data.text)
      .join('');
    assert.equal(text, 'Followed in the chat.');
    const ids = events.map((e) => e.id);
    assert.deepEqual(
      ids,
      ids.map((_, i) => ids[0]! + i),
    );
  });

  it('types a send as the server takes it: only text required', async () => {
    const client = createAgentChatClient({ baseUrl: gateway.url, apiKey: user.apiKey });
    model.replies.push({ text: 'Sent with text alone.', toolCalls: [] });
    // Compiles only while image_urls, attachmentIds and planMode are optional in the generated types.
    const { data, response } = await client.api.POST('/api/v1/completions', { body: { text: 'just text' } });
    assert.equal(response.status, 202);
    assert.ok(data);
    const ids = { chatId: data.chatId, runId: data.runId };
    const run = await waitFor(
      async () => {
        const r = await client.getRun(ids);
        return r.status === 'COMPLETE' ? r : undefined;
      },
      { what: 'the run to complete' },
    );
    assert.equal(run.planMode, false);
  });

  it('falls back to polling when the stream cannot be opened', async () => {
    let polls = 0;
    const client = createAgentChatClient({
      baseUrl: gateway.url,
      apiKey: user.apiKey,
      fetch: (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (url.endsWith('/events')) return Promise.resolve(new Response('no streams here', { status: 502 }));
        if (/\/runs\/[^/]+$/.test(url)) polls++;
        return fetch(input, init);
      },
    });
    model.replies.push({ text: 'Polled for.', toolCalls: [] });
    const run = await client.sendAndWait({ text: 'hello again' }, { pollIntervalMs: 50 });
    assert.equal(run.status, 'COMPLETE');
    assert.equal(run.text, 'Polled for.');
    assert.ok(polls >= 1);
  });

  it('verifyWebhook accepts what the service signs and refuses a changed body, a wrong secret or an old timestamp', () => {
    const secret = 'whsec_test_secret';
    const body = JSON.stringify({
      id: 'wh:1',
      event: 'agent.completed',
      createdAt: new Date().toISOString(),
      data: {},
    });
    const { headers } = webhookHeaders({ secret, body, event: 'agent.completed', deliveryId: randomUUID() });
    assert.equal(verifyWebhook(secret, headers, body), true);
    assert.equal(verifyWebhook(secret, new Headers(headers), Buffer.from(body)), true);
    assert.equal(verifyWebhook(secret, headers, body.replace('agent', 'agenT')), false);
    assert.equal(verifyWebhook('another', headers, body), false);
    assert.equal(verifyWebhook(secret, headers, body, new Date(Date.now() + 3_600_000)), false);
    assert.equal(verifyWebhook(secret, { ...headers, 'x-svc-signature': undefined }, body), false);
  });
});
