import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { freePort, testStack } from '../../testkit/stack';
import { watchOutput, type WatchedOutput } from '../support/output';
import { sampleSum } from '../support/prometheus';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The worker process as production runs it (apps/worker/main.ts), reaching Temporal through a
 * proxy the test switches off: its /readyz goes unready and back, /healthz stays up, and the SDK's
 * own lines come out of pino.
 */
describe('worker health', function () {
  this.timeout(120_000);
  let proxy: TcpProxy;
  let child: ChildProcess;
  let output: WatchedOutput;
  let base: string;

  const readiness = async () => {
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: (await res.json()) as { temporal: string; worker: string } };
  };

  before(async () => {
    const stack = await testStack();
    proxy = await startTcpProxy(stack.temporalAddress);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'apps/worker/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        // At debug the SDK's own lines (its bundling, its polling) are written too.
        LOG_LEVEL: 'debug',
        DATABASE_URL: stack.databaseUrl,
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_TASK_QUEUE: `health-${randomUUID()}`,
        APP_SECRET: stack.config().APP_SECRET,
        HOST: '127.0.0.1',
        WORKER_HTTP_PORT: String(port),
        MODEL_PROVIDER: 'local',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    output = watchOutput(child, 'worker', 90_000);
    await output.waitForLine(/worker running/);
  });
  after(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await proxy.close();
  });

  it('is ready while it polls, unready while Temporal is unreachable, and ready again after', async () => {
    assert.deepEqual(await readiness(), {
      status: 200,
      body: { status: 'ready', database: 'up', temporal: 'up', worker: 'RUNNING' },
    });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.ok(sampleSum(metrics, 'temporal_num_pollers') >= 1, 'the SDK runtime’s metrics are served');

    await proxy.down();
    const down = await waitFor(
      async () => {
        const r = await readiness();
        return r.status === 503 ? r : undefined;
      },
      { what: 'the worker to go unready', timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.equal(down.body.temporal, 'down');
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'alive all the same');

    await proxy.up();
    await waitFor(async () => ((await readiness()).status === 200 ? true : undefined), {
      what: 'the worker to be ready again',
      timeoutMs: 60_000,
      intervalMs: 200,
    });
  });

  it('writes every line through pino, the Temporal SDK’s included', () => {
    const lines = output
      .output()
      .split('\n')
      .filter((l) => l.trim());
    assert.ok(lines.length > 0);
    for (const line of lines) {
      const parsed = JSON.parse(line) as { service?: string };
      assert.equal(parsed.service, 'worker', line);
    }
    const sdk = lines
      .map((l) => JSON.parse(l) as { component?: string })
      .filter((l) => l.component === 'temporal');
    assert.ok(sdk.length > 0, `no line of the SDK's own in:\n${lines.join('\n')}`);
  });
});
