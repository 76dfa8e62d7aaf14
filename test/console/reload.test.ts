import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { createTestUser } from '../../testkit/users';
import { SHOTS, consolePage, launchBrowser, signIn, startConsoleStack, type ConsoleStack } from './browser';

/**
 * A reload shows a chat as the page showed it live: the last run's outcome (its status, its plan's
 * decision with who and when, its error) and the answer, read back from the messages and the
 * run's snapshot; an earlier turn that left no answer keeps saying how it ended.
 */
describe('the console after a reload', function () {
  this.timeout(240_000);
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;

  before(async () => {
    stack = await startConsoleStack();
    await mkdir(SHOTS, { recursive: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    await signIn(page, stack.gateway.url, await createTestUser());
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  const ui = () => consolePage(page, stack.gateway.url);
  // In-page code is given as text: the tests are compiled without the DOM's types.
  const textOf = async (selector: string) =>
    String(
      await page.evaluate(
        `(() => { const el = document.querySelector(${JSON.stringify(selector)}); return el ? el.innerText : '(none)'; })()`,
      ),
    );
  const currentRun = () => textOf('section[aria-label="Current run"]');
  const messages = () => textOf('ol.messages');

  /** A new chat whose first turn, in plan mode, waits for its plan's decision. */
  async function planWaiting(text: string): Promise<void> {
    await ui().go('/chats');
    await ui().fill('Message', text);
    await ui().click('Plan mode', 'checkbox');
    await ui().click('Send');
    await ui().seeText('Plan waiting for your approval');
  }

  /** The run's outcome and the messages, live; then the same after a reload. */
  async function sameAfterReload(shot: string): Promise<{ run: string; messages: string }> {
    // Live, the run's end is followed by a read of its final snapshot and of the messages.
    await page.waitForNetworkIdle({ idleTime: 250 });
    const live = { run: await currentRun(), messages: await messages() };
    await page.reload({ waitUntil: 'networkidle0' });
    await page
      .waitForSelector('section[aria-label="Current run"]', { timeout: 10_000 })
      .catch(() => undefined);
    const reloaded = { run: await currentRun(), messages: await messages() };
    await page.screenshot({ path: path.join(SHOTS, `console-reload-${shot}.png`), fullPage: true });
    assert.deepEqual(reloaded, live, 'the reload shows what the page showed live');
    return reloaded;
  }

  it('shows a rejected plan, its feedback and the cancelled run after a reload, and later as an earlier turn', async () => {
    await planWaiting('draw an image of a storm');
    await ui().fill('Feedback', 'not this one');
    await ui().click('Reject');
    await ui().seeText('Run cancelled');
    const { run } = await sameAfterReload('rejected');
    assert.match(run, /Plan rejected/);
    assert.match(run, /Rejected by you, in the console/);
    assert.match(run, /not this one/);

    // The next turn takes the place of the current run; the rejected one stays under its message.
    await ui().fill('Message', 'hello again');
    await ui().click('Send');
    await ui().seeText('You said: "hello again"');
    await ui().seeText('Run complete');
    const earlier = () => textOf('section[aria-label="Earlier run"]');
    await page.waitForSelector('section[aria-label="Earlier run"]');
    assert.match(await earlier(), /Run cancelled[\s\S]*Plan rejected[\s\S]*not this one/);
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('section[aria-label="Earlier run"]');
    assert.match(await earlier(), /Run cancelled[\s\S]*Plan rejected[\s\S]*not this one/);
  });

  it('shows a cancelled run after a reload', async () => {
    await planWaiting('draw an image of a harbour');
    await ui().click('Cancel run');
    await ui().seeText('Run cancelled');
    const { run } = await sameAfterReload('cancelled');
    assert.match(run, /Plan cancelled/);
    assert.match(run, /The run was cancelled\./);
  });

  it('shows an approved plan’s record and its image, once, after a reload', async () => {
    await planWaiting('draw an image of a lighthouse');
    await ui().click('Approve');
    await ui().seeText('Run complete', 60_000);
    await page.waitForSelector('.message.assistant img');
    // The reply says what was made, and shows it once; its signed address is not text to read.
    const replyOnce = async () => {
      assert.equal(await page.$$eval('.message.assistant img', (imgs) => imgs.length), 1);
      const shown = await messages();
      assert.doesNotMatch(shown, /sig=|\/files\//);
      assert.match(shown, /ai_image_2 made an image/);
    };
    await replyOnce();
    const { run } = await sameAfterReload('approved');
    await replyOnce();
    assert.match(run, /Plan approved/);
    assert.match(run, /Approved by you, in the console/);
    await ui().seeText('ai_image_2: succeeded · 10 credits');
  });
});
