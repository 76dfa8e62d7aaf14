import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { TOOL_LIST } from '../../apps/mcp/tools';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';
import { ScriptedModel } from '../support/scripted-model';

/**
 * The published MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`), not our SDK client,
 * drives /mcp: a third-party client proves the endpoint speaks the protocol as others read it.
 * Its `build/index.js` is the CLI itself; the package's bin (`cli.js`) would also start the web UI,
 * which lives only in the Inspector's own repository.
 */
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector-cli/build/index.js');

type Structured = Record<string, unknown>;

describe('MCP at /mcp, driven by the MCP Inspector CLI', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let model: ScriptedModel;
  let user: TestUser;

  before(async () => {
    const stack = await testStack();
    model = new ScriptedModel([]);
    const config = stack.config({ TEMPORAL_TASK_QUEUE: `mcp-inspector-${randomUUID()}` });
    worker = await startWorker({ config, model });
    gateway = await startGateway({ config });
    user = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
    await worker?.stop();
  });

  /** One Inspector CLI run against /mcp with the user's API key; its stdout is the JSON answer. */
  async function inspector(method: string, ...args: string[]): Promise<Structured> {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        INSPECTOR,
        `${gateway.url}/mcp`,
        '--transport',
        'http',
        '--header',
        `Authorization: Bearer ${user.apiKey}`,
        '--method',
        method,
        ...args,
      ],
      // It reads its own package.json for its client name, looking for it relative to the working
      // directory: from its build directory, it finds it.
      { cwd: path.dirname(INSPECTOR), timeout: 45_000 },
    );
    return JSON.parse(stdout) as Structured;
  }

  const toolCall = async (name: string, args: Record<string, string>) => {
    const result = (await inspector(
      'tools/call',
      '--tool-name',
      name,
      ...Object.entries(args).flatMap(([k, v]) => ['--tool-arg', `${k}=${v}`]),
    )) as { isError?: boolean; structuredContent: Structured };
    assert.notEqual(result.isError, true, JSON.stringify(result.structuredContent));
    return result.structuredContent;
  };

  it('lists the twelve tools, sends a message, waits for its run and finds its chat', async () => {
    const { tools } = (await inspector('tools/list')) as { tools: { name: string; inputSchema: unknown }[] };
    // The twelve the server has, as our own client sees them (mcp.test.ts names them).
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOL_LIST.map((t) => t.name).sort());
    assert.equal(tools.length, 12);
    assert.ok(tools.every((t) => typeof t.inputSchema === 'object'));

    model.replies.push({ text: 'Hello, Inspector.', toolCalls: [] });
    const sent = await toolCall('send_message', { text: 'hello from the inspector' });
    assert.equal(sent.status, 'queued');
    const ids = { chatId: String(sent.chatId), runId: String(sent.runId) };

    const run = await toolCall('wait_for_run', { ...ids, timeoutSeconds: '30' });
    assert.equal(run.status, 'COMPLETE');
    assert.equal(run.text, 'Hello, Inspector.');

    const listed = await toolCall('list_chats', {});
    assert.deepEqual(
      (listed.data as { id: string }[]).map((c) => c.id),
      [ids.chatId],
    );
  });

  it('fails as a client sees it without an API key', async () => {
    await assert.rejects(
      promisify(execFile)(
        process.execPath,
        [INSPECTOR, `${gateway.url}/mcp`, '--transport', 'http', '--method', 'tools/list'],
        { cwd: path.dirname(INSPECTOR), timeout: 45_000 },
      ),
      (err: { code?: number; stderr?: string }) => {
        assert.notEqual(err.code, 0);
        assert.match(err.stderr ?? '', /401|Unauthorized/i);
        return true;
      },
    );
  });
});
