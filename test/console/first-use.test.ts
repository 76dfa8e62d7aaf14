import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { createTestUser, type TestUser } from '../../testkit/users';
import { solidPng, startMediaServer } from '../support/fake-providers';
import {
  DESKTOP,
  PHONE,
  SHOTS,
  consolePage,
  painted,
  launchBrowser,
  signIn,
  startConsoleStack,
  type ConsoleStack,
} from './browser';

/** Chats as a new user names them: long, and alike in their first words. */
const LONG_TITLES = [
  'generate an image of a lighthouse at dusk over a stormy sea, with gulls and a fishing boat',
  'generate an image of a harbour at dawn with the fishing boats coming home through the fog',
  // One word longer than a phone is wide.
  'Supercalifragilisticexpialidocious-and-then-some-more-letters-without-a-single-space-anywhere',
];

/**
 * What a new user meets first: pages that fit a phone whatever the chat titles, titles cut to the
 * width there is (and whole on hover), a file picker that reads in full, errors in words rather
 * than field paths, prices in good English, and a first visit that logs nothing as failed.
 */
describe('the console as a new user meets it', function () {
  this.timeout(240_000);
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  let user: TestUser;
  let chatId: string;

  before(async () => {
    stack = await startConsoleStack();
    await mkdir(SHOTS, { recursive: true });
    user = await createTestUser();
    for (const title of LONG_TITLES) {
      const res = await fetch(`${stack.gateway.url}/api/v1/chats`, {
        method: 'POST',
        headers: { ...user.bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ title }),
      });
      assert.equal(res.status, 201);
      chatId = ((await res.json()) as { id: string }).id;
    }
    // An endpoint whose address is longer than a phone is wide, listed on the webhooks page.
    const endpoint = await fetch(`${stack.gateway.url}/api/webhook-endpoints`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `https://hooks.example.test/${'receivers/agent-chat-service/'.repeat(4)}events`,
        events: ['agent.completed'],
      }),
    });
    assert.equal(endpoint.status, 201, await endpoint.clone().text());
    browser = await launchBrowser();
    page = await browser.newPage();
    await signIn(page, stack.gateway.url, user);
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  const ui = () => consolePage(page, stack.gateway.url);
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  it('loads its first page for a visitor not signed in with no failed request and no error logged', async () => {
    const context = await browser.createBrowserContext();
    try {
      const visitor = await context.newPage();
      const failed: string[] = [];
      visitor.on('console', (m) => {
        if (m.type() === 'error') failed.push(`console: ${m.text()}`);
      });
      visitor.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      await consolePage(visitor, stack.gateway.url).go('/');
      await visitor.waitForSelector('::-p-aria([name="Sign in"][role="button"])');
      assert.deepEqual(failed, []);
      // The public route keeps the spec's answer.
      assert.equal((await fetch(`${stack.gateway.url}/api/auth/session`)).status, 401);
    } finally {
      await context.close();
    }
  });

  it('fits a 360 px phone on every page, with long chat titles', async () => {
    await page.setViewport(PHONE);
    try {
      for (const pathname of ['/chats', `/chats/${chatId}`, '/tools', '/keys', '/webhooks']) {
        await ui().go(pathname);
        await page.waitForSelector('main h1');
        const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(width <= PHONE.width, `${pathname} is ${width} px wide at ${PHONE.width} px`);
      }
      await ui().go('/chats');
      await ui().seeText('generate an image of a');
      await painted(page);
      await shot('console-chats-long-titles-phone');
    } finally {
      await page.setViewport(DESKTOP);
    }
  });

  it('cuts a long title to the list’s width at 1280 px, and shows it whole on hover', async () => {
    await ui().go(`/chats/${chatId}`);
    const link = `[...document.querySelectorAll('.chat-list a')].find((a) => a.textContent === ${JSON.stringify(LONG_TITLES[0])})`;
    await page.waitForFunction(link);
    // How many of the title's characters fit in its link, measured in its own font.
    const shown = Number(
      await page.evaluate(`(() => {
        const a = ${link};
        const style = getComputedStyle(a);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = style.font;
        const room = a.clientWidth - ctx.measureText('…').width;
        let n = 0;
        while (n < a.textContent.length && ctx.measureText(a.textContent.slice(0, n + 1)).width <= room) n++;
        return n;
      })()`),
    );
    assert.ok(shown >= 30, `only ${shown} characters of the title show`);
    // Two titles alike in their first words are told apart in the list.
    const first = LONG_TITLES[0]!.slice(0, shown);
    const second = LONG_TITLES[1]!.slice(0, shown);
    assert.notEqual(first, second);
    assert.equal(await page.evaluate(`${link}.title`), LONG_TITLES[0], 'the whole title on hover');
    await shot('console-chats-long-titles-desktop');
  });

  it('has a file picker that reads in full: the button, then what was chosen', async () => {
    await ui().go('/chats');
    await ui().seeText('No files chosen');
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-console-picker-'));
    const file = path.join(dir, 'a-photo-of-the-lighthouse.png');
    await writeFile(file, await solidPng(8, 8, { r: 10, g: 90, b: 200 }));
    // A click on the button opens the browser's file chooser, as the native control's would.
    const [chooser] = await Promise.all([page.waitForFileChooser(), page.click('.file-picker label')]);
    await chooser.accept([file]);
    await ui().seeText('a-photo-of-the-lighthouse.png');
    const box = (await page.evaluate(`(() => {
      const picker = document.querySelector('.file-picker');
      const chosen = picker.querySelector('.chosen');
      return { text: picker.innerText, cut: chosen.scrollWidth > chosen.clientWidth };
    })()`)) as { text: string; cut: boolean };
    assert.match(box.text, /^Attach files\s+a-photo-of-the-lighthouse\.png$/);
    assert.equal(box.cut, false);
    await page.setViewport(PHONE);
    await painted(page);
    await (await page.$('.composer'))?.screenshot({ path: path.join(SHOTS, 'console-file-picker.png') });
    await page.setViewport(DESKTOP);
  });

  it('says what is wrong with a field in words, not as the request path', async () => {
    await ui().go('/webhooks');
    await ui().fill('Endpoint URL', 'ftp://example.test/hook');
    await ui().click('Add endpoint');
    await page.waitForSelector('.error[role="alert"]');
    const said = String(await page.evaluate(`document.querySelector('.error[role="alert"]').innerText`));
    assert.doesNotMatch(said, /body\./);
    assert.match(said, /URL: must be an http:\/\/ or https:\/\/ address/);
    await shot('console-error-message');
  });

  it('prices a one-credit call as “1 credit”', async () => {
    const media = await startMediaServer();
    try {
      const image = media.add('square.png', await solidPng(40, 40, { r: 200, g: 40, b: 40 }), 'image/png');
      await ui().go('/tools');
      await ui().fill('Image URL', image);
      for (const [name, value] of [
        ['X (px)', '0'],
        ['Y (px)', '0'],
        ['Width (px)', '10'],
        ['Height (px)', '10'],
      ] as const)
        await ui().fill(name, value);
      await ui().click('Run crop_image');
      await ui().seeText('Cost: 1 credit ·', 60_000);
    } finally {
      await media.close();
    }
  });
});
