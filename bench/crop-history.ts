/** Diagnostic: event timeline of one crop_image tool-call workflow (where the crop's time goes). */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { createTestUser } from '../test/support/auth';
import { startGateway } from '../test/support/gateway';
import { testStack, stopTestStack } from '../test/support/stack';
import { startWorker } from '../test/support/worker';
import { TOOL_CALL_WORKFLOW_TYPE } from '../workflows/tool-call.contract';

async function main() {
  const stack = await testStack();
  const config = stack.config({
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    STORAGE_LOCAL_DIR: await mkdtemp(path.join(os.tmpdir(), 'bench-files-')),
    MODEL_PROVIDER: process.env.MP ?? 'none',
    TEMPORAL_TASK_QUEUE: `bench-h-${randomBytes(3).toString('hex')}`,
  });
  const worker = await startWorker({ config });
  const gw = await startGateway({ config });
  const user = await createTestUser();
  const jpeg = await sharp({
    create: {
      width: 2000,
      height: 1500,
      channels: 3,
      background: { r: 1, g: 2, b: 3 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg()
    .toBuffer();
  const srv = createServer((_q, r) => r.end(jpeg));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/p.jpg`;
  for (let i = 0; i < Number(process.env.N ?? 6); i++) {
    const t = Date.now();
    const res = await fetch(`${gw.url}/api/v1/tools/crop_image`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ image_url: url, x: 500, y: 400, width: 800, height: 600 }),
    });
    await res.text();
    console.log('crop', res.status, Date.now() - t, 'ms');
  }
  const c = gw.deps.temporal.client;
  let last;
  for await (const w of c.workflow.list({ query: `WorkflowType='${TOOL_CALL_WORKFLOW_TYPE}'` })) {
    if (!last || w.startTime > last.startTime) last = w;
  }
  const h = await c.workflow.getHandle(last!.workflowId).fetchHistory();
  type Ev = NonNullable<typeof h.events>[number];
  const ms = (e: Ev) =>
    Number(e.eventTime?.seconds ?? 0) * 1000 + Math.round((e.eventTime?.nanos ?? 0) / 1e6);
  const t0 = ms(h.events![0]!);
  for (const e of h.events!)
    console.log(
      String(ms(e) - t0).padStart(5),
      'ms',
      e.eventType,
      e.activityTaskScheduledEventAttributes?.activityType?.name ?? '',
    );
  srv.close();
  await gw.close();
  await worker.stop();
  await stopTestStack();
  process.exit(0);
}
main().catch(async (e) => {
  console.error(e);
  await stopTestStack();
  process.exit(1);
});
