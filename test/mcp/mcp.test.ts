import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AddressInfo } from 'node:net';
import { startOperatorPort } from '../../apps/gateway/operator';
import { createNotificationHub } from '../../core/db/notification-hub';
import type { ModelReply } from '../../core/model/types';
import { watchRun } from '../../operations/runs/watch';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { quadrantImage, startMediaServer, testVideo } from '../support/fake-providers';
import { countingPool } from '../support/counting-pool';
import { sampleSum } from '../support/prometheus';
import { ScriptedModel } from '../support/scripted-model';
import { waitFor } from '../support/wait';
import type { Config } from '../../core/config/config';
import { agentWorkflowId } from '../../workflows/agent.contract';
import { runViaSearchAttribute } from '../../workflows/search-attributes';
import { toolCallWorkflowId } from '../../workflows/tool-call.contract';

type Snapshot = {
  status: string;
  text: string;
  waitpoints: { id: string; status: string; plan: { summary: string } }[];
  settings: Record<string, unknown> | null;
  usage: { steps: number };
  toolCalls: { toolName: string; status: string }[];
};
type Structured = Record<string, unknown> & { code?: string };

const ALLOWED_ORIGIN = 'http://console.example.test';

describe('MCP at /mcp', function () {
  this.timeout(60_000);
  let dir: string;
  let gateways: TestGateway[];
  let worker: TestWorker;
  let model: ScriptedModel;
  let media: Awaited<ReturnType<typeof startMediaServer>>;
  let user: TestUser;
  let config: Config;
  const clients: Client[] = [];

  before(async () => {
    const stack = await testStack();
    dir = await mkdtemp(path.join(tmpdir(), 'mcp-test-'));
    media = await startMediaServer();
    model = new ScriptedModel([]);
    config = stack.config({
      TEMPORAL_TASK_QUEUE: `mcp-${randomUUID()}`,
      STORAGE_LOCAL_DIR: path.join(dir, 'storage'),
      IMAGE_PROVIDER: 'local-preview',
      MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN,
    });
    worker = await startWorker({ config, model });
    // Two gateways over one database and one Temporal: any of them serves any request.
    gateways = [await startGateway({ config }), await startGateway({ config })];
    user = await createTestUser();
  });
  // Each test scripts the replies its own turns get.
  beforeEach(() => {
    model.replies.length = 0;
  });
  after(async () => {
    for (const client of clients) await client.close();
    for (const gateway of gateways ?? []) await gateway.close();
    await worker?.stop();
    await media?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** An SDK client; with `alternate`, each HTTP request goes to the other gateway. */
  async function connect(
    who: TestUser = user,
    options: { alternate?: boolean; onRequest?: (gateway: string) => void; via?: TestGateway } = {},
  ): Promise<Client> {
    let turn = 0;
    const transport = new StreamableHTTPClientTransport(new URL(`${gateways[0]!.url}/mcp`), {
      requestInit: { headers: who.bearer },
      fetch: (input, init) => {
        const gateway = options.via ?? gateways[options.alternate ? turn++ % 2 : 0]!;
        options.onRequest?.(gateway.url);
        const url = new URL(String(input instanceof Request ? input.url : input));
        return fetch(`${gateway.url}${url.pathname}${url.search}`, init);
      },
    });
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(transport);
    // As an assistant does: with the tools listed, the client checks every result it gets against
    // its tool's outputSchema, and a result that does not match throws.
    await client.listTools();
    clients.push(client);
    return client;
  }

  /** The JSON of a resources/read answer. */
  const jsonOf = (result: { contents: ({ text: string } | { blob: string })[] }): unknown => {
    const [content] = result.contents;
    assert.ok(content && 'text' in content);
    return JSON.parse(content.text);
  };

  /** The run a send_message result names. */
  const idsOf = (result: { structuredContent: Structured }) => ({
    chatId: String(result.structuredContent.chatId),
    runId: String(result.structuredContent.runId),
  });

  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: Structured };

  /** A raw JSON-RPC POST, for what the SDK client would not send. */
  const post = (body: unknown, headers: Record<string, string> = user.bearer) =>
    fetch(`${gateways[0]!.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  /** The JSON-RPC message of a response streamed as server-sent events. */
  const message = async (res: Response) => {
    const text = await res.text();
    const data = text.split('\n').find((line) => line.startsWith('data: '));
    return JSON.parse(data ? data.slice(6) : text) as { result?: Record<string, unknown>; error?: unknown };
  };
  const initialize = (protocolVersion: string) => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

  async function waitForRun(
    client: Client,
    ids: { chatId: string; runId: string },
    onprogress?: (p: Progress) => void,
  ): Promise<Snapshot> {
    for (;;) {
      const result = (await client.callTool(
        { name: 'wait_for_run', arguments: { ...ids, timeoutSeconds: 20 } },
        undefined,
        onprogress ? { onprogress } : {},
      )) as CallToolResult;
      assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
      const snapshot = result.structuredContent as Snapshot;
      const pending = snapshot.waitpoints.some((w) => w.status === 'PENDING');
      if (['COMPLETE', 'FAILED', 'CANCELLED'].includes(snapshot.status) || pending) return snapshot;
    }
  }

  describe('connection and auth', () => {
    it('initializes at 2025-11-25 and negotiates 2025-06-18', async () => {
      const client = await connect();
      assert.equal(client.getServerVersion()?.name, 'agent-chat-service');
      assert.ok(client.getServerCapabilities()?.tools);
      for (const version of ['2025-11-25', '2025-06-18']) {
        const res = await post(initialize(version));
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('mcp-session-id'), null, 'stateless: no session');
        assert.equal((await message(res)).result?.protocolVersion, version);
      }
    });

    it('lists every tool with input and output schemas valid as JSON Schema 2020-12', async () => {
      const client = await connect();
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'ai_image_2',
        'cancel_run',
        'crop_image',
        'decide_plan',
        'follow_chat',
        'get_messages',
        'get_run',
        'list_chats',
        'list_runs',
        'merge_videos',
        'send_message',
        'wait_for_run',
      ]);
      const ajv = new Ajv2020({ strict: false });
      addFormats.default(ajv);
      for (const tool of tools) {
        for (const schema of [tool.inputSchema, tool.outputSchema]) {
          assert.ok(schema, `${tool.name} has both schemas`);
          assert.equal(schema.type, 'object');
          assert.ok(ajv.validateSchema(schema), `${tool.name}: ${ajv.errorsText(ajv.errors)}`);
          ajv.compile(schema);
        }
        assert.ok(tool.description && tool.description.length > 40, tool.name);
        assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', tool.name);
      }
      // The tools that create something take an idempotency key; the others do not.
      const keyed = tools.filter((t) => t.inputSchema.properties?.idempotencyKey).map((t) => t.name);
      assert.deepEqual(keyed.sort(), ['ai_image_2', 'crop_image', 'merge_videos', 'send_message']);
      const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
      assert.deepEqual(readOnly.sort(), [
        'follow_chat',
        'get_messages',
        'get_run',
        'list_chats',
        'list_runs',
        'wait_for_run',
      ]);
      const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
      assert.deepEqual(destructive.sort(), ['cancel_run', 'decide_plan']);
    });

    it('answers a missing or wrong key with 401 and the resource metadata', async () => {
      const wrong = { authorization: 'Bearer svck_live_wrongwrongwrongwrongwrongwrong' };
      for (const headers of [{}, wrong] as Record<string, string>[]) {
        const res = await post(initialize('2025-11-25'), headers);
        assert.equal(res.status, 401);
        const challenge = res.headers.get('www-authenticate') ?? '';
        const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
        assert.ok(url, challenge);
        assert.equal(new URL(url).pathname, '/.well-known/oauth-protected-resource/mcp');
        const metadata = (await (await fetch(`${gateways[0]!.url}${new URL(url).pathname}`)).json()) as {
          resource: string;
        };
        assert.match(metadata.resource, /\/mcp$/);
      }
    });

    it('refuses a revoked key on its very next request, and counts calls as REST does', async () => {
      const other = await createTestUser();
      const client = await connect(other);
      const before = await gateways[0]!.deps.db.pool.query<{ lastUsedAt: Date | null }>(
        `SELECT "lastUsedAt" FROM "ApiKey" WHERE id = $1`,
        [other.apiKeyId],
      );
      assert.ok(before.rows[0]?.lastUsedAt, 'lastUsedAt is set by MCP calls');
      const list = await call(client, 'list_chats', {});
      assert.equal(list.isError, undefined);
      const res = await fetch(`${gateways[0]!.url}/api/keys/${other.apiKeyId}`, {
        method: 'DELETE',
        headers: { cookie: other.cookie },
      });
      assert.equal(res.status, 204);
      await assert.rejects(client.callTool({ name: 'list_chats', arguments: {} }), /401|Unauthorized/i);
    });

    it('refuses a body over 1 MB with 413 before reading it as JSON-RPC', async () => {
      const res = await post({ ...initialize('2025-11-25'), padding: 'x'.repeat(1024 * 1024 + 1) });
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
    });

    it('refuses a browser Origin it does not serve, and allows a configured one', async () => {
      const bad = await post(initialize('2025-11-25'), { ...user.bearer, origin: 'http://evil.example' });
      assert.equal(bad.status, 403);
      const good = await post(initialize('2025-11-25'), { ...user.bearer, origin: ALLOWED_ORIGIN });
      assert.equal(good.status, 200);
    });

    it("counts each call against the key's limits with REST's, and refuses a batch before counting it", async () => {
      const limited = await startGateway({ config: { ...config, SEND_RATE_LIMIT_PER_MINUTE: 2 } });
      gateways.push(limited);
      const who = await createTestUser();
      const sendCall = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'send_message', arguments: { text: `batched ${id}` } },
      });
      const batch = await fetch(`${limited.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...who.bearer,
        },
        body: JSON.stringify([1, 2, 3].map(sendCall)),
      });
      assert.equal(batch.status, 400);
      assert.equal(((await batch.json()) as { error: { code: number } }).error.code, -32600);

      const client = await connect(who, { via: limited });
      const chats = await call(client, 'list_chats', {});
      assert.deepEqual(chats.structuredContent.data, [], 'nothing of the batch was sent');
      // The batch counted nothing: two sends are left, one over MCP and one over REST.
      const first = await call(client, 'send_message', { text: 'limited over MCP' });
      assert.equal(first.isError, undefined, JSON.stringify(first.structuredContent));
      const restSend = () =>
        fetch(`${limited.url}/api/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...who.bearer },
          body: JSON.stringify({ text: 'limited over REST' }),
        });
      assert.equal((await restSend()).status, 202);
      await assert.rejects(call(client, 'send_message', { text: 'one too many' }), /RATE_LIMITED/);
      const refused = await restSend();
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as { code: string }).code, 'RATE_LIMITED');
    });

    it('answers plain JSON unless progress is asked for or the tool waits, then an event stream', async () => {
      const callOf = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
      });
      const ids = { chatId: randomUUID(), runId: randomUUID() };
      for (const [body, type] of [
        [initialize('2025-11-25'), 'application/json'],
        [callOf('list_chats', {}), 'application/json'],
        [callOf('get_run', ids), 'application/json'],
        [callOf('list_chats', {}, { progressToken: 'p1' }), 'text/event-stream'],
        [callOf('wait_for_run', { ...ids, timeoutSeconds: 1 }), 'text/event-stream'],
      ] as const) {
        const res = await post(body);
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', new RegExp(`^${type}`), JSON.stringify(body));
        const answer = await message(res);
        assert.ok(answer.result, JSON.stringify(answer));
      }
    });

    it("answers the protocol's own refusals and notifications as Streamable HTTP says", async () => {
      const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
      const jsonOnly = await post(list, { ...user.bearer, accept: 'application/json' });
      assert.equal(jsonOnly.status, 406);
      assert.match(JSON.stringify(await jsonOnly.json()), /Not Acceptable/);
      const badVersion = await post(list, { ...user.bearer, 'mcp-protocol-version': '1999-01-01' });
      assert.equal(badVersion.status, 400);
      assert.match(JSON.stringify(await badVersion.json()), /Unsupported protocol version/);
      const notJsonRpc = await post({ hello: 'world' });
      assert.equal(notJsonRpc.status, 400);
      assert.match(JSON.stringify(await notJsonRpc.json()), /Invalid JSON-RPC message/);
      const notification = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      assert.equal(notification.status, 202);
      assert.equal(await notification.text(), '');
      const listed = await post(list, { ...user.bearer, 'mcp-protocol-version': '2025-11-25' });
      assert.equal(listed.status, 200);
      assert.equal(listed.headers.get('content-type'), 'application/json');
      assert.ok(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length > 0);
    });

    it('lets a client drop an event stream midway, and serves the next request', async () => {
      const client = await connect();
      model.replies.push({ text: 'one moment please', toolCalls: [] });
      model.holdAfterFirstHalf();
      const ids = idsOf(await call(client, 'send_message', { text: 'follow, then leave' }));
      const aborted = new AbortController();
      const res = await fetch(`${gateways[0]!.url}/mcp`, {
        method: 'POST',
        headers: {
          ...user.bearer,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: {
            name: 'wait_for_run',
            arguments: { ...ids, timeoutSeconds: 30 },
            _meta: { progressToken: 'p' },
          },
        }),
        signal: aborted.signal,
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const reader = res.body!.getReader();
      const first = await reader.read();
      assert.match(new TextDecoder().decode(first.value), /notifications\/progress/);
      aborted.abort();
      await assert.rejects(reader.read());
      model.release();
      assert.equal((await waitForRun(client, ids)).status, 'COMPLETE');
    });

    it('is stateless: GET and DELETE answer 405, and two gateways serve one client alternately', async () => {
      const get = await fetch(`${gateways[0]!.url}/mcp`, {
        headers: { ...user.bearer, accept: 'text/event-stream' },
      });
      assert.equal(get.status, 405);
      const seen = new Set<string>();
      const client = await connect(user, { alternate: true, onRequest: (url) => seen.add(url) });
      model.replies.push({ text: 'Hello from two gateways.', toolCalls: [] });
      const sent = await call(client, 'send_message', { text: 'hi' });
      const snapshot = await waitForRun(client, idsOf(sent));
      assert.equal(snapshot.status, 'COMPLETE');
      assert.equal(seen.size, 2, 'both gateways answered');
    });
  });

  describe('turns', () => {
    it("takes the agent's settings and budget in send_message, shows them in get_run, and refuses a model not offered", async () => {
      const client = await connect();
      model.replies.push({ text: 'Set.', toolCalls: [] });
      const sent = await call(client, 'send_message', {
        text: 'with settings',
        instructions: 'Answer in one word.',
        maxSteps: 2,
        tools: ['crop_image'],
        budget: { maxCredits: 3, maxToolCalls: 1 },
      });
      assert.equal(sent.isError, undefined, JSON.stringify(sent.structuredContent));
      const snapshot = await waitForRun(client, idsOf(sent));
      assert.deepEqual(snapshot.settings, {
        model: null,
        instructions: 'Answer in one word.',
        maxSteps: 2,
        tools: ['crop_image'],
        budget: { maxCredits: '3', maxToolCalls: 1 },
      });
      assert.equal(snapshot.usage.steps, 1);
      // The operator offers no model by name here: any name is one it does not offer.
      const refused = await call(client, 'send_message', { text: 'x', model: 'gpt-9' });
      assert.equal(refused.isError, true);
      assert.equal(refused.structuredContent.code, 'INVALID_REQUEST');
      assert.match(JSON.stringify(refused.structuredContent), /"path":"arguments\.model"/);
    });

    it('runs a plain turn: send_message, then wait_for_run with the text growing in progress', async () => {
      const client = await connect();
      const answer = 'The quick brown fox jumps over the lazy dog.';
      const firstHalf = answer.slice(0, Math.ceil(answer.length / 2));
      model.replies.push({ text: answer, toolCalls: [] });
      model.holdAfterFirstHalf();
      const sent = await call(client, 'send_message', { text: 'tell me about foxes' });
      assert.equal(sent.isError, undefined, JSON.stringify(sent.structuredContent));
      assert.equal(sent.structuredContent.status, 'queued');
      const ids = idsOf(sent);
      const messages: string[] = [];
      const snapshot = await waitForRun(client, ids, (p) => {
        if (p.message) messages.push(p.message);
        // The model holds its second half until the first has reached the client.
        if (p.message === firstHalf) model.release();
      });
      assert.equal(snapshot.status, 'COMPLETE');
      assert.equal(snapshot.text, answer);
      assert.deepEqual(messages, [firstHalf, answer]);

      // Operators see where the run came from: its row, and its execution in Temporal.
      const { rows } = await gateways[0]!.deps.db.pool.query<{ via: string }>(
        `SELECT via FROM "Run" WHERE id = $1`,
        [ids.runId],
      );
      assert.equal(rows[0]?.via, 'mcp');
      const execution = await gateways[0]!.deps.temporal.client.workflow
        .getHandle(agentWorkflowId(ids.chatId))
        .describe();
      assert.equal(execution.typedSearchAttributes.get(runViaSearchAttribute), 'mcp');
      assert.match((await execution.staticSummary()) ?? '', /via MCP/);

      const history = await call(client, 'get_messages', { chatId: ids.chatId });
      const roles = (history.structuredContent.data as { role: string }[]).map((m) => m.role);
      assert.deepEqual(roles, ['user', 'assistant']);
      const chats = await call(client, 'list_chats', { q: 'tell me about foxes' });
      assert.deepEqual(
        (chats.structuredContent.data as { id: string }[]).map((c) => c.id),
        [ids.chatId],
      );
    });

    it('waits on a run by its notifications: a run that does not change is read once, however long the wait', async () => {
      const client = await connect();
      const answer = 'Held until the wait is over.';
      const firstHalf = answer.slice(0, Math.ceil(answer.length / 2));
      model.replies.push({ text: answer, toolCalls: [] });
      model.holdAfterFirstHalf();
      const ids = idsOf(await call(client, 'send_message', { text: 'hold on' }));
      try {
        await waitFor(
          async () => (await call(client, 'get_run', ids)).structuredContent.text === firstHalf || undefined,
          { what: 'the first half written' },
        );
        const { pool } = gateways[0]!.deps.db;
        const query = pool.query.bind(pool);
        let reads = 0;
        pool.query = ((config: unknown, ...rest: unknown[]) => {
          if ((config as { name?: string } | undefined)?.name === 'run-snapshot') reads++;
          return (query as (...args: unknown[]) => unknown)(config, ...rest);
        }) as typeof pool.query;
        try {
          const waited = await call(client, 'wait_for_run', { ...ids, timeoutSeconds: 2 });
          assert.equal(waited.structuredContent.status, 'RUNNING');
        } finally {
          pool.query = query;
        }
        // Polling every 250 ms read it eight times.
        assert.equal(reads, 1);
      } finally {
        model.release();
      }
      assert.equal((await waitForRun(client, ids)).text, answer);
    });

    it('counts its open waits in agent_mcp_waits_open on /metrics, and forgets those that ended', async () => {
      const operator = await startOperatorPort(gateways[0]!.ops, config, { port: 0, host: '127.0.0.1' });
      const openNow = async () => {
        const res = await fetch(`http://127.0.0.1:${(operator.address() as AddressInfo).port}/metrics`);
        assert.equal(res.status, 200);
        return sampleSum(await res.text(), 'agent_mcp_waits_open');
      };
      const client = await connect();
      model.replies.push({ text: 'Held while two waits are open.', toolCalls: [] });
      model.holdAfterFirstHalf();
      const ids = idsOf(await call(client, 'send_message', { text: 'hold on' }));
      try {
        const before = await openNow();
        const waits = [1, 2].map(() => call(client, 'wait_for_run', { ...ids, timeoutSeconds: 30 }));
        await waitFor(async () => ((await openNow()) === before + 2 ? true : undefined), {
          what: 'two waits counted',
        });
        model.release();
        for (const waited of await Promise.all(waits))
          assert.equal(waited.structuredContent.status, 'COMPLETE');
        assert.equal(await openNow(), before);
      } finally {
        model.release();
        operator.closeAllConnections();
        operator.close();
      }
    });

    it('reads a run it waits on when notified only, never at the heartbeat of an idle one', async () => {
      const client = await connect();
      const answer = 'Held while nothing happens.';
      const firstHalf = answer.slice(0, Math.ceil(answer.length / 2));
      model.replies.push({ text: answer, toolCalls: [] });
      model.holdAfterFirstHalf();
      const ids = idsOf(await call(client, 'send_message', { text: 'hold on' }));
      const { deps } = gateways[0]!;
      const hub = createNotificationHub({
        url: config.DATABASE_URL,
        logger: deps.logger,
        channels: ['run_events'],
      });
      // Listening first: the wake a connection's opening gives its subscribers is a read of its own.
      const unsubscribe = hub.subscribe('run_events', randomUUID(), () => undefined);
      const stop = new AbortController();
      try {
        await waitFor(async () => hub.listening() || undefined, { what: 'the hub listening' });
        await waitFor(
          async () => (await call(client, 'get_run', ids)).structuredContent.text === firstHalf || undefined,
          { what: 'the first half written' },
        );
        const counted = countingPool(deps.db.pool);
        const heartbeatMs = 50;
        const watch = watchRun(
          {
            ...deps,
            config: { ...config, STREAM_HEARTBEAT_INTERVAL: heartbeatMs },
            db: { ...deps.db, pool: counted.pool },
          },
          hub,
          { userId: user.userId, ...ids },
          stop.signal,
        );
        // Read as wait_for_run reads it: each snapshot as soon as it comes.
        const texts: string[] = [];
        const following = (async () => {
          for await (const snapshot of watch) texts.push(snapshot.text);
        })();
        await waitFor(async () => texts.length > 0 || undefined, { what: 'the first snapshot' });
        const readsAtFirst = counted.statements();
        // Idle for twenty heartbeat intervals: time passing is the condition here.
        await new Promise((resolve) => setTimeout(resolve, 20 * heartbeatMs));
        assert.equal(counted.statements(), readsAtFirst, 'nothing read while the run was idle');
        assert.deepEqual(texts, [firstHalf]);
        model.release();
        await waitFor(async () => texts.includes(answer) || undefined, {
          what: 'the change read when notified',
        });
        stop.abort();
        await following;
      } finally {
        stop.abort();
        model.release();
        unsubscribe();
        await hub.close();
      }
      assert.equal((await waitForRun(client, ids)).text, answer);
    });

    const planReply = (): ModelReply => ({
      text: 'I will generate a cat.',
      toolCalls: [{ id: 'call_1', toolName: 'ai_image_2', input: { prompt: 'a cat' } }],
    });

    it('runs a plan-mode turn approved through decide_plan', async () => {
      const client = await connect();
      model.replies.push(planReply(), { text: 'Here is your cat.', toolCalls: [] });
      const sent = await call(client, 'send_message', { text: 'draw a cat', planMode: true });
      const ids = idsOf(sent);
      const waiting = await waitForRun(client, ids);
      assert.equal(waiting.status, 'WAITING');
      const [waitpoint] = waiting.waitpoints;
      assert.equal(waitpoint?.plan.summary, 'I will generate a cat.');

      const decided = await call(client, 'decide_plan', {
        ...ids,
        waitpointId: waitpoint.id,
        approved: true,
        feedback: 'go ahead',
      });
      assert.equal(decided.structuredContent.status, 'APPROVED');
      const done = await waitForRun(client, ids);
      assert.equal(done.status, 'COMPLETE');
      assert.deepEqual(
        done.toolCalls.map((c) => [c.toolName, c.status]),
        [['ai_image_2', 'SUCCEEDED']],
      );
      // The run's tool call came over MCP with its run.
      const { rows } = await gateways[0]!.deps.db.pool.query<{ via: string }>(
        `SELECT via FROM "ToolCall" WHERE "runId" = $1`,
        [ids.runId],
      );
      assert.deepEqual(rows, [{ via: 'mcp' }]);
      const again = await call(client, 'decide_plan', { ...ids, waitpointId: waitpoint.id, approved: true });
      assert.equal(again.isError, true);
      assert.equal(again.structuredContent.code, 'WAITPOINT_RESOLVED');
    });

    it('refuses a decision whose planHash is not the pending plan’s with PLAN_CHANGED, as REST does', async () => {
      const client = await connect();
      model.replies.push(planReply(), { text: 'Here is your cat.', toolCalls: [] });
      const ids = idsOf(await call(client, 'send_message', { text: 'draw a cat', planMode: true }));
      const waiting = (await waitForRun(client, ids)) as Snapshot & {
        waitpoints: { id: string; planHash: string }[];
      };
      const [waitpoint] = waiting.waitpoints;
      assert.ok(waitpoint);
      const decision = { ...ids, waitpointId: waitpoint.id, approved: true, planHash: '0'.repeat(64) };
      const rest = await fetch(
        `${gateways[0]!.url}/api/v1/chats/${ids.chatId}/runs/${ids.runId}/waitpoints/${waitpoint.id}/complete`,
        {
          method: 'POST',
          headers: { ...user.bearer, 'content-type': 'application/json' },
          body: JSON.stringify({ approved: true, planHash: decision.planHash }),
        },
      );
      assert.equal(rest.status, 409);
      assert.equal(((await rest.json()) as { code: string }).code, 'PLAN_CHANGED');

      const refused = await call(client, 'decide_plan', decision);
      assert.equal(refused.isError, true, JSON.stringify(refused.structuredContent));
      assert.equal(refused.structuredContent.code, 'PLAN_CHANGED');
      assert.equal((await call(client, 'get_run', ids)).structuredContent.status, 'WAITING');

      const approved = await call(client, 'decide_plan', { ...decision, planHash: waitpoint.planHash });
      assert.equal(approved.structuredContent.status, 'APPROVED', JSON.stringify(approved.structuredContent));
      assert.equal((await waitForRun(client, ids)).status, 'COMPLETE');
    });

    it('ends a rejected plan CANCELLED', async () => {
      const client = await connect();
      model.replies.push(planReply());
      const sent = await call(client, 'send_message', { text: 'draw a cat', planMode: true });
      const ids = idsOf(sent);
      const waiting = await waitForRun(client, ids);
      const decided = await call(client, 'decide_plan', {
        ...ids,
        waitpointId: waiting.waitpoints[0]!.id,
        approved: false,
        feedback: 'no cats',
      });
      assert.equal(decided.structuredContent.status, 'REJECTED');
      const done = await waitForRun(client, ids);
      assert.equal(done.status, 'CANCELLED');
      assert.deepEqual(done.toolCalls, []);
    });

    it('refuses a second send while the run is active (RUN_ACTIVE), and cancel_run ends the run', async () => {
      const client = await connect();
      model.replies.push({ text: 'a long answer that will be cut', toolCalls: [] });
      model.holdAfterFirstHalf();
      const calls = model.calls.length;
      const sent = await call(client, 'send_message', { text: 'go on' });
      const ids = idsOf(sent);
      // Cancelled mid-answer, while the model holds its second half.
      await waitFor(async () => (model.calls.length > calls ? true : undefined), { what: 'the model call' });
      const busy = await call(client, 'send_message', { text: 'again', chatId: ids.chatId });
      assert.equal(busy.isError, true);
      assert.equal(busy.structuredContent.code, 'RUN_ACTIVE');
      // The same facts as REST's 409: the run to follow, and where.
      const activeRun = busy.structuredContent.activeRun as { id: string; links: { poll: string } };
      assert.equal(activeRun.id, ids.runId);
      assert.equal(activeRun.links.poll, `/api/v1/chats/${ids.chatId}/runs/${ids.runId}`);

      const cancelled = await call(client, 'cancel_run', ids);
      assert.equal(cancelled.isError, undefined, JSON.stringify(cancelled.structuredContent));
      const done = await waitForRun(client, ids);
      assert.equal(done.status, 'CANCELLED');
      model.release();
      const twice = await call(client, 'cancel_run', ids);
      assert.equal(twice.structuredContent.code, 'RUN_NOT_ACTIVE');
    });

    it('queues a send behind the active run with onActiveRun "enqueue", and interrupts it with "interrupt"', async () => {
      const client = await connect(user, { alternate: true });
      model.replies.push(
        { text: 'the first answer, cut short', toolCalls: [] },
        { text: 'the interrupting answer', toolCalls: [] },
        { text: 'the queued answer', toolCalls: [] },
      );
      model.holdAfterFirstHalf();
      const calls = model.calls.length;
      const ids = idsOf(await call(client, 'send_message', { text: 'first' }));
      await waitFor(async () => (model.calls.length > calls ? true : undefined), { what: 'the model call' });
      /** A send into the busy chat, admitted. */
      const sendBusy = async (text: string, onActiveRun: string) => {
        const sent = await call(client, 'send_message', { text, chatId: ids.chatId, onActiveRun });
        assert.equal(sent.isError, undefined, JSON.stringify(sent.structuredContent));
        assert.equal(sent.structuredContent.queuePosition, 1);
        return sent;
      };
      const queued = await sendBusy('queued', 'enqueue');
      const interrupting = await sendBusy('interrupting', 'interrupt');
      assert.deepEqual(interrupting.structuredContent.interruptedRunIds, [ids.runId]);
      assert.equal((await waitForRun(client, ids)).status, 'CANCELLED');
      model.release();
      const second = await waitForRun(client, idsOf(interrupting));
      assert.equal(second.status, 'COMPLETE');
      assert.equal(second.text, 'the interrupting answer');
      const third = await waitForRun(client, idsOf(queued));
      assert.equal(third.status, 'COMPLETE');
      assert.equal(third.text, 'the queued answer');
      const bad = await call(client, 'send_message', { text: 'x', chatId: ids.chatId, onActiveRun: 'later' });
      assert.equal(bad.isError, true);
      assert.equal(bad.structuredContent.code, 'INVALID_REQUEST');
    });

    it('replays a send_message retried with its idempotencyKey, and refuses the key for another message', async () => {
      const client = await connect();
      model.replies.push({ text: 'once only', toolCalls: [] });
      const key = randomUUID();
      const first = await call(client, 'send_message', { text: 'exactly once', idempotencyKey: key });
      assert.equal(first.isError, undefined, JSON.stringify(first.structuredContent));
      const again = await call(client, 'send_message', { text: 'exactly once', idempotencyKey: key });
      assert.deepEqual(again.structuredContent, first.structuredContent);
      const ids = idsOf(first);
      assert.equal((await waitForRun(client, ids)).status, 'COMPLETE');
      const { rows } = await gateways[0]!.deps.db.pool.query<{ runs: number }>(
        `SELECT count(*)::int AS runs FROM "Run" WHERE "chatId" = $1`,
        [ids.chatId],
      );
      assert.deepEqual(rows, [{ runs: 1 }]);

      const other = await call(client, 'send_message', { text: 'something else', idempotencyKey: key });
      assert.equal(other.isError, true);
      assert.equal(other.structuredContent.code, 'IDEMPOTENCY_KEY_REUSED');
      const bad = await call(client, 'send_message', { text: 'x', idempotencyKey: 'has a space' });
      assert.equal(bad.structuredContent.code, 'INVALID_REQUEST');
      assert.deepEqual(
        (bad.structuredContent.details as { path: string }[]).map((d) => d.path),
        ['arguments.idempotencyKey'],
      );
    });

    it('lists runs with list_runs: every chat or one, filtered by status and the metadata send_message gave', async () => {
      const client = await connect(await createTestUser());
      const tag = `mcp-${randomUUID()}`;
      const first = idsOf(
        await call(client, 'send_message', { text: 'tagged', metadata: { customer: tag } }),
      );
      await waitForRun(client, first);
      const second = idsOf(await call(client, 'send_message', { text: 'untagged' }));
      await waitForRun(client, second);
      const runIds = (result: { structuredContent: Structured }) =>
        (result.structuredContent.data as { id: string }[]).map((r) => r.id);
      const all = await call(client, 'list_runs', {});
      assert.equal(all.isError, undefined, JSON.stringify(all.structuredContent));
      assert.deepEqual(runIds(all), [second.runId, first.runId]);
      const paged = await call(client, 'list_runs', { limit: 1 });
      assert.deepEqual(runIds(paged), [second.runId]);
      const rest = await call(client, 'list_runs', { limit: 1, cursor: paged.structuredContent.nextCursor });
      assert.deepEqual(runIds(rest), [first.runId]);
      assert.equal(rest.structuredContent.nextCursor, null);
      const tagged = await call(client, 'list_runs', { metadata: { customer: tag }, status: 'COMPLETE' });
      assert.deepEqual(runIds(tagged), [first.runId]);
      assert.deepEqual((tagged.structuredContent.data as { metadata: object }[])[0]?.metadata, {
        customer: tag,
      });
      assert.deepEqual(runIds(await call(client, 'list_runs', { chatId: second.chatId })), [second.runId]);
      assert.deepEqual(runIds(await call(client, 'list_runs', { status: 'FAILED,CANCELLED' })), []);
      for (const [args, path] of [
        [{ status: 'DONE' }, 'arguments.status'],
        [{ since: '2026-12-02T00:00:00Z', until: '2026-12-01T00:00:00Z' }, 'arguments.until'],
        [{ metadata: { 'a=b': 'c' } }, 'arguments.metadata'],
        [{ chatId: first.chatId, extra: 1 }, 'arguments'],
      ] as const) {
        const bad = await call(client, 'list_runs', args);
        assert.equal(bad.isError, true);
        assert.equal(bad.structuredContent.code, 'INVALID_REQUEST');
        const paths = (bad.structuredContent.details as { path: string }[]).map((d) => d.path);
        assert.ok(
          paths.some((p) => p.startsWith(path)),
          `${JSON.stringify(args)}: ${paths.join()}`,
        );
      }
      const stranger = await call(await connect(await createTestUser()), 'list_runs', {
        chatId: first.chatId,
      });
      assert.equal(stranger.structuredContent.code, 'CHAT_NOT_FOUND');
    });

    it("shows another user's chats and runs as if they did not exist", async () => {
      const mine = await connect();
      model.replies.push({ text: 'private', toolCalls: [] });
      const sent = await call(mine, 'send_message', { text: 'secret' });
      const ids = idsOf(sent);
      await waitForRun(mine, ids);
      const stranger = await connect(await createTestUser());
      for (const [name, args] of [
        ['get_run', ids],
        ['wait_for_run', ids],
        ['cancel_run', ids],
        ['get_messages', { chatId: ids.chatId }],
        ['send_message', { chatId: ids.chatId, text: 'hello?' }],
      ] as const) {
        const result = await call(stranger, name, args);
        assert.equal(result.isError, true, name);
        assert.equal(result.structuredContent.code, 'CHAT_NOT_FOUND', name);
      }
      const list = await call(stranger, 'list_chats', {});
      assert.deepEqual(list.structuredContent.data, []);
    });

    it('answers bad arguments with INVALID_REQUEST, and an unknown tool with a JSON-RPC error', async () => {
      const client = await connect();
      const bad = await call(client, 'get_run', { chatId: 'not-a-uuid', runId: randomUUID(), extra: 1 });
      assert.equal(bad.isError, true);
      assert.equal(bad.structuredContent.code, 'INVALID_REQUEST');
      const paths = (bad.structuredContent.details as { path: string }[]).map((d) => d.path);
      assert.ok(paths.includes('arguments.chatId'), paths.join());
      const tooLong = await call(client, 'wait_for_run', {
        chatId: randomUUID(),
        runId: randomUUID(),
        timeoutSeconds: 61,
      });
      assert.equal(tooLong.structuredContent.code, 'INVALID_REQUEST');
      await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);
      const malformed = await post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 42 } });
      assert.ok((await message(malformed)).error, 'a malformed request is a JSON-RPC error');
    });
  });

  describe('resources', () => {
    it("lists the chat and run templates and the caller's chats, and reads both", async () => {
      const client = await connect();
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(
        resourceTemplates.map((t) => t.uriTemplate),
        ['chat://{chatId}', 'chat://{chatId}/runs/{runId}'],
      );
      model.replies.push({ text: 'readable', toolCalls: [] });
      const ids = idsOf(await call(client, 'send_message', { text: 'resource me' }));
      await waitForRun(client, ids);
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === `chat://${ids.chatId}`));

      const chat = await client.readResource({ uri: `chat://${ids.chatId}` });
      const body = jsonOf(chat) as {
        chat: { id: string };
        messages: unknown[];
      };
      assert.equal(body.chat.id, ids.chatId);
      assert.equal(body.messages.length, 2);
      // A long chat: the resource holds its latest 50 messages, oldest first.
      await gateways[0]!.deps.db.pool.query(
        `INSERT INTO "Message" (id, "chatId", role, "contentBlocks", "createdAt")
         SELECT gen_random_uuid(), $1, 'user', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'old ' || n)),
                now() - make_interval(mins => 100 - n)
           FROM generate_series(1, 60) AS n`,
        [ids.chatId],
      );
      const long = jsonOf(await client.readResource({ uri: `chat://${ids.chatId}` })) as {
        messages: { role: string; contentBlocks: { text?: string }[] }[];
      };
      assert.equal(long.messages.length, 50);
      assert.equal(long.messages[0]?.contentBlocks[0]?.text, 'old 13');
      assert.deepEqual(
        long.messages.slice(-2).map((m) => m.role),
        ['user', 'assistant'],
      );
      const run = await client.readResource({ uri: `chat://${ids.chatId}/runs/${ids.runId}` });
      assert.equal((jsonOf(run) as Snapshot).text, 'readable');

      const stranger = await connect(await createTestUser());
      await assert.rejects(stranger.readResource({ uri: `chat://${ids.chatId}` }), /-32002|not found/i);
      await assert.rejects(client.readResource({ uri: 'chat://nope' }), /Not a resource/);
    });

    it("notifies a subscriber while the run changes and when it ends, on the subscription's own request", async () => {
      const client = await connect();
      const updated: string[] = [];
      // What the run was when each notification came: read at once, as a subscriber would.
      const seen: Promise<Snapshot>[] = [];
      let uri = '';
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updated.push(n.params.uri);
        // The held model finishes once the first change has been read.
        seen.push(
          client.readResource({ uri }).then((r) => {
            model.release();
            return jsonOf(r) as Snapshot;
          }),
        );
      });
      model.replies.push({ text: 'one moment please', toolCalls: [] });
      model.holdAfterFirstHalf();
      const ids = idsOf(await call(client, 'send_message', { text: 'subscribe' }));
      uri = `chat://${ids.chatId}/runs/${ids.runId}`;
      // Answers once the run has ended.
      await client.subscribeResource({ uri });
      assert.ok(updated.length >= 2, `one change while held, then the end: ${updated.length}`);
      assert.ok(updated.every((u) => u === uri));
      const statuses = (await Promise.all(seen)).map((s) => s.status);
      assert.equal(statuses.at(-1), 'COMPLETE', statuses.join());
      assert.notEqual(statuses[0], 'COMPLETE', statuses.join());
    });
    it("notifies a chat's subscriber when a turn lands in it, reading its messages only then", async () => {
      const client = await connect();
      model.replies.push({ text: 'first answer', toolCalls: [] });
      const ids = idsOf(await call(client, 'send_message', { text: 'open a chat' }));
      await waitForRun(client, ids);
      const uri = `chat://${ids.chatId}`;
      let notified!: () => void;
      const updated = new Promise<void>((resolve) => (notified = resolve));
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        if (n.params.uri === uri) notified();
      });
      const { pool } = gateways[0]!.deps.db;
      const query = pool.query.bind(pool);
      const reads = { chat: 0, messages: 0 };
      pool.query = ((config: unknown, ...rest: unknown[]) => {
        const text = typeof config === 'string' ? config : ((config as { text?: string }).text ?? '');
        if (text.includes('FROM "Message"')) reads.messages++;
        else if (text.includes('FROM "Chat" WHERE id = $1')) reads.chat++;
        return (query as (...args: unknown[]) => unknown)(config, ...rest);
      }) as typeof pool.query;
      const stop = new AbortController();
      try {
        const subscription = client.subscribeResource({ uri }, { signal: stop.signal });
        // While the chat does not change, its row is looked at and its messages are not read again.
        await waitFor(async () => reads.chat >= 5 || undefined, { what: 'the watch looking at the chat' });
        // Reading the whole chat every 250 ms read them at every look.
        assert.equal(reads.messages, 1);
        model.replies.push({ text: 'second answer', toolCalls: [] });
        const next = idsOf(await call(client, 'send_message', { chatId: ids.chatId, text: 'and again' }));
        await updated;
        stop.abort();
        await assert.rejects(subscription, /abort/i);
        await waitForRun(client, next);
      } finally {
        pool.query = query;
      }
    });
  });

  describe('media tools', () => {
    /** crop_image's arguments: the top-left quarter of a new image. */
    const cropOf = async (file: string, width: number, height: number) => ({
      image_url: media.add(file, await quadrantImage(width * 2, height * 2)),
      x: 0,
      y: 0,
      width,
      height,
    });
    /** The user's latest tool call outside any run. */
    const lastDirectCall = async (who: TestUser) =>
      (
        await gateways[0]!.deps.db.pool.query<{ id: string; via: string }>(
          `SELECT id, via FROM "ToolCall" WHERE "userId" = $1 AND "runId" IS NULL ORDER BY "startedAt" DESC LIMIT 1`,
          [who.userId],
        )
      ).rows[0];

    it('crop_image returns the crop as a resource_link and the ToolResult, with progress', async () => {
      const client = await connect();
      const url = media.add('quad.png', await quadrantImage(40, 20), 'image/png');
      const progress: string[] = [];
      const result = (await client.callTool(
        { name: 'crop_image', arguments: { image_url: url, x: 0, y: 0, width: 20, height: 10 } },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? '') },
      )) as CallToolResult & { structuredContent: Structured };
      assert.equal(progress[0], 'crop_image started');
      assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
      const output = result.structuredContent.output as { url: string };
      const link = result.content.find((c) => c.type === 'resource_link');
      assert.equal(link?.uri, output.url);
      assert.equal(link?.mimeType, 'image/png');
      assert.equal(result.structuredContent.creditCost, '1');
      // Signed file URLs name PUBLIC_BASE_URL; the test's gateway listens elsewhere.
      const { pathname, search } = new URL(output.url);
      const file = await fetch(`${gateways[0]!.url}${pathname}${search}`);
      assert.equal(file.status, 200);
      // The crop is small: it comes inline too, the very bytes the link serves.
      const image = result.content.find((c) => c.type === 'image');
      assert.equal(image?.mimeType, 'image/png');
      assert.deepEqual(Buffer.from(image.data, 'base64'), Buffer.from(await file.arrayBuffer()));

      // Its records say it came over MCP: the row, and its execution in Temporal.
      const toolCall = await lastDirectCall(user);
      assert.equal(toolCall?.via, 'mcp');
      const execution = await gateways[0]!.deps.temporal.client.workflow
        .getHandle(toolCallWorkflowId(toolCall.id))
        .describe();
      assert.equal(execution.typedSearchAttributes.get(runViaSearchAttribute), 'mcp');
      assert.match((await execution.staticSummary()) ?? '', /via MCP/);
    });

    it('returns an image over MCP_INLINE_IMAGE_MAX_BYTES as the link alone; a REST call records via rest', async () => {
      const small = await startGateway({ config: { ...config, MCP_INLINE_IMAGE_MAX_BYTES: 64 } });
      try {
        const client = await connect(user, { via: small });
        const result = await call(client, 'crop_image', await cropOf('big.png', 20, 10));
        assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
        assert.deepEqual(
          result.content.map((c) => c.type),
          ['text', 'resource_link'],
        );
      } finally {
        await small.close();
      }
      const rest = await fetch(`${gateways[0]!.url}/api/v1/tools/ai_image_2`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'over REST' }),
      });
      assert.equal(rest.status, 200);
      assert.equal((await lastDirectCall(user))?.via, 'rest');
    });

    it('charges a crop_image retried with its idempotencyKey once, over MCP and REST alike', async () => {
      const payer = await createTestUser();
      const client = await connect(payer);
      const args = await cropOf('idem.png', 4, 4);
      const key = randomUUID();
      const first = await call(client, 'crop_image', { ...args, idempotencyKey: key });
      assert.equal(first.isError, undefined, JSON.stringify(first.structuredContent));
      const again = await call(client, 'crop_image', { ...args, idempotencyKey: key });
      assert.deepEqual(again.structuredContent, first.structuredContent);
      // The same key over REST names the same request of the same operation: replayed too.
      const rest = await fetch(`${gateways[0]!.url}/api/v1/tools/crop_image`, {
        method: 'POST',
        headers: { ...payer.bearer, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(args),
      });
      assert.equal(rest.status, 200);
      assert.equal(rest.headers.get('idempotent-replayed'), 'true');
      const { rows } = await gateways[0]!.deps.db.pool.query<{ calls: number; chargedOnce: boolean }>(
        `SELECT (SELECT count(*)::int FROM "ToolCall" WHERE "userId" = $1) AS calls,
                (SELECT 1000000 - "creditBalance" = $2::numeric FROM "User" WHERE id = $1) AS "chargedOnce"`,
        [payer.userId, first.structuredContent.creditCost],
      );
      assert.deepEqual(rows, [{ calls: 1, chargedOnce: true }]);
    });

    it('crop_image answers a bad rectangle with INVALID_RECTANGLE', async () => {
      const client = await connect();
      const result = await call(client, 'crop_image', {
        image_url: media.add('q2.png', await quadrantImage(8, 8)),
        x: 0,
      });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent.code, 'INVALID_RECTANGLE');
    });

    it('ai_image_2 generates an image', async () => {
      const client = await connect();
      const result = await call(client, 'ai_image_2', { prompt: 'a lighthouse' });
      assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
      assert.equal(result.structuredContent.toolName, 'ai_image_2');
      assert.ok(result.content.some((c) => c.type === 'resource_link'));
      const image = result.content.find((c) => c.type === 'image');
      assert.ok(
        image && image.mimeType.startsWith('image/') && image.data.length > 0,
        JSON.stringify(result.content.map((c) => c.type)),
      );
    });

    it('merge_videos joins two clips, sending progress while it works', async () => {
      const client = await connect();
      const clips = await Promise.all([
        testVideo({ width: 160, height: 120, fps: 24, seconds: 1, audio: false }),
        testVideo({ width: 160, height: 120, fps: 24, seconds: 1, audio: false }),
      ]);
      const urls = clips.map((clip, i) => media.add(`mcp-clip-${i}.mp4`, clip, 'video/mp4'));
      const progress: string[] = [];
      const result = (await client.callTool(
        { name: 'merge_videos', arguments: { video_urls: urls } },
        undefined,
        {
          onprogress: (p) => progress.push(p.message ?? ''),
        },
      )) as CallToolResult & { structuredContent: Structured };
      assert.equal(progress[0], 'merge_videos started');
      assert.equal(result.isError, undefined, JSON.stringify(result.structuredContent));
      const link = result.content.find((c) => c.type === 'resource_link');
      assert.equal(link?.mimeType, 'video/mp4');
      assert.ok(!result.content.some((c) => c.type === 'image'), 'a video is never inlined');
    });
  });
});
