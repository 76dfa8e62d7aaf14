import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import puppeteer, { type Page } from 'puppeteer-core';
import { permanentFailure } from '../../core/errors/failures';
import type { ModelReply } from '../../core/model/types';
import { TestLanguageModel, type TestModelRequest } from '../support/scripted-model';
import { freePort, stopTestStack, testStack } from '../../testkit/stack';
import { drawReply, startService, terminal } from './support';

/**
 * Screenshots of the Temporal Web UI for docs/operations.md: a failed run listed as Failed, and a
 * run waiting for its plan's approval found by `AgentRunStatus = "WAITING"`. Run it with
 * `npx tsx test/ops/web-ui-screenshots.ts`; it needs a Chromium (Debian: `apt-get install
 * chromium`, or CHROMIUM_PATH).
 */
class OneStepModel extends TestLanguageModel {
  override readonly provider = 'screenshots';
  readonly steps: (ModelReply | { fail: string })[] = [];
  async complete(request: TestModelRequest): Promise<ModelReply> {
    const step = this.steps.shift() ?? { text: 'done', toolCalls: [] };
    if ('fail' in step) throw permanentFailure('PROVIDER_ERROR', step.fail);
    request.onText(step.text);
    return step;
  }
}

async function shoot(page: Page, url: string, expect: string[], file: string): Promise<void> {
  await page.goto(url, { waitUntil: 'networkidle0' });
  // The list loads from visibility, which catches up within moments: reload until it shows.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = String(await page.evaluate('document.body.innerText'));
    if (expect.every((e) => text.includes(e))) break;
    if (Date.now() > deadline)
      throw new Error(`the page never showed ${expect.join(', ')}:\n${text.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await page.reload({ waitUntil: 'networkidle0' });
  }
  await page.screenshot({ path: file });
  process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}

async function main(): Promise<void> {
  const uiPort = await freePort();
  process.env.TEST_TEMPORAL_UI_PORT = String(uiPort);
  const out = path.resolve(__dirname, '../../docs/images');
  await mkdir(out, { recursive: true });
  await testStack();
  const model = new OneStepModel();
  const service = await startService({ model, config: { PLAN_APPROVAL_TIMEOUT: '1h' } });

  model.steps.push({ fail: 'The model refused.' });
  const failed = await service.send({ text: 'hello' });
  await service.until(failed, terminal, 'the failed run');
  model.steps.push(drawReply());
  const waiting = await service.send({ text: 'draw a lighthouse', planMode: true });
  await service.until(waiting, (s) => s.status === 'WAITING', 'the waiting run');

  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
    defaultViewport: { width: 1440, height: 720 },
  });
  try {
    const page = await browser.newPage();
    const ui = `http://127.0.0.1:${uiPort}/namespaces/default/workflows`;
    const user = service.user.userId;
    await shoot(
      page,
      `${ui}?query=${encodeURIComponent(`WorkflowType = "agentRunWorkflow" AND ExecutionStatus = "Failed" AND UserId = "${user}"`)}`,
      [failed.chatId, 'Failed'],
      path.join(out, 'web-ui-failed-runs.png'),
    );
    await shoot(
      page,
      `${ui}?query=${encodeURIComponent(`AgentRunStatus = "WAITING" AND UserId = "${user}"`)}`,
      [waiting.chatId, 'Running'],
      path.join(out, 'web-ui-waiting-runs.png'),
    );
    await shoot(
      page,
      `${ui}/${encodeURIComponent(failed.chatId)}`,
      ['PROVIDER_ERROR', 'The model refused.'],
      path.join(out, 'web-ui-failed-run.png'),
    );
  } finally {
    await browser.close();
    await service.close();
    await stopTestStack();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
