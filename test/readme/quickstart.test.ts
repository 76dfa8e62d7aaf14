import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { embeddedDefaults } from '../../apps/stack/defaults';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { testStack } from '../../testkit/stack';
import { startWorker, type TestWorker } from '../../testkit/worker';

const run = promisify(execFile);

/** The bash block between the README's quickstart markers, exactly as a reader copies it. */
async function quickStart(): Promise<string> {
  const readme = await readFile(path.join(__dirname, '../../README.md'), 'utf8');
  const section = /<!-- quickstart:start -->\s*```bash\n([\s\S]*?)```\s*<!-- quickstart:end -->/.exec(readme);
  assert.ok(section?.[1], 'the README has its quick start between the quickstart markers');
  return section[1];
}

/** Runs the quick start as a reader does: plain bash, no flags of ours; bounded, so a hang fails. */
async function runQuickStart(
  dir: string,
  env: Record<string, string>,
  boundMs: number,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const script = await quickStart();
  const started = Date.now();
  try {
    const { stdout, stderr } = await run('bash', ['-c', script], {
      cwd: dir,
      env: { ...process.env, ...env },
      timeout: boundMs,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr, ms: Date.now() - started };
  } catch (err) {
    const failed = err as { code?: number; killed?: boolean; stdout: string; stderr: string };
    assert.ok(!failed.killed, `the quick start was still running after ${boundMs} ms:\n${failed.stderr}`);
    return {
      code: failed.code ?? -1,
      stdout: failed.stdout,
      stderr: failed.stderr,
      ms: Date.now() - started,
    };
  }
}

/**
 * The README's quick start, run against a live stack as `npm start` configures it (open sign-up,
 * the local model and image provider, the sign-up grant): sign-up to a plan-mode turn approved
 * and COMPLETE; and, against gateways that refuse or never run the turn, a script that stops and
 * says why.
 */
describe('the README quick start', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let worker: TestWorker;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'quickstart-'));
    const config = (await testStack()).config({
      ...embeddedDefaults({ host: '127.0.0.1', filesDir: path.join(dir, 'files') }),
      TEMPORAL_TASK_QUEUE: `readme-${randomUUID()}`,
    });
    worker = await startWorker({ config });
    gateway = await startGateway({ config });
  });
  after(async () => {
    await gateway.close();
    await worker.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs from sign-up to a finished plan-mode turn', async () => {
    const { code, stdout, stderr } = await runQuickStart(dir, { BASE: gateway.url }, 120_000);
    assert.equal(code, 0, stderr);
    const events = [...stdout.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    assert.equal(events[0], 'snapshot');
    assert.ok(events.includes('tool.finished'), stdout);
    assert.equal(events.at(-1), 'status');
    const final = JSON.parse(stdout.slice(stdout.lastIndexOf('{\n'))) as { status: string; image: string };
    assert.equal(final.status, 'COMPLETE', stdout);
    assert.match(final.image, /^http/);
    assert.match(stdout, /^APPROVED$/m, 'the approval was accepted');
  });

  it('stops at a refused call, showing what the server answered', async () => {
    const closed = await startGateway({
      config: (await testStack()).config({
        TEMPORAL_TASK_QUEUE: `readme-${randomUUID()}`,
        ALLOW_SIGN_UP: 'false',
      }),
    });
    try {
      const { code, stdout, stderr, ms } = await runQuickStart(dir, { BASE: closed.url }, 30_000);
      assert.notEqual(code, 0, 'the script failed');
      assert.match(stderr, /quickstart: \S+\/api\/auth\/sign-up failed: .*Sign-up is disabled/, stderr);
      assert.match(stderr, /403/, 'curl names the status');
      assert.equal(stdout.trim(), '', 'nothing after the refusal ran');
      assert.ok(ms < 20_000, `it stopped at once (${ms} ms)`);
    } finally {
      await closed.close();
    }
  });

  it('gives up on a run that does not move within TIMEOUT, saying where it stands', async () => {
    // No worker polls this gateway's queue: its runs stay QUEUED.
    const idle = await startGateway({
      config: (await testStack()).config({
        TEMPORAL_TASK_QUEUE: `readme-idle-${randomUUID()}`,
        SIGN_UP_RATE_LIMIT_PER_HOUR: '1000',
      }),
    });
    try {
      const { code, stderr, ms } = await runQuickStart(dir, { BASE: idle.url, TIMEOUT: '3' }, 60_000);
      assert.notEqual(code, 0, 'the script failed');
      assert.match(stderr, /quickstart: the run is still QUEUED after 3 s/, stderr);
      assert.ok(ms < 30_000, `it gave up after its TIMEOUT (${ms} ms)`);
    } finally {
      await idle.close();
    }
  });
});
