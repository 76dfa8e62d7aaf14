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

/**
 * The README's quick start, run against a live stack as `npm start` configures it (open sign-up,
 * the local model and image provider, the sign-up grant): sign-up to a plan-mode turn approved
 * and COMPLETE.
 */
describe('the README quick start', function () {
  this.timeout(120_000);
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
    const script = await quickStart();
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      env: { ...process.env, BASE: gateway.url },
      timeout: 100_000,
    });
    const events = [...stdout.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
    assert.equal(events[0], 'snapshot');
    assert.ok(events.includes('tool.finished'), stdout);
    assert.equal(events.at(-1), 'status');
    const final = JSON.parse(stdout.slice(stdout.lastIndexOf('{\n'))) as { status: string; image: string };
    assert.equal(final.status, 'COMPLETE', stdout);
    assert.match(final.image, /^http/);
    assert.match(stdout, /^APPROVED$/m, 'the approval was accepted');
  });
});
