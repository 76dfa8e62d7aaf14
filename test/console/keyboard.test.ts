import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, KeyInput, Page } from 'puppeteer-core';
import { createTestUser } from '../../testkit/users';
import { ScriptedModel } from '../support/scripted-model';
import { consolePage, launchBrowser, signIn, startConsoleStack, type ConsoleStack } from './browser';

const PASSWORD = 'a long enough password';

/** Where the focus is, as a person sees it: the control's name, and whether its focus ring shows. */
interface Focused {
  name: string;
  tag: string;
  ring: boolean;
  inView: boolean;
  inDialog: boolean;
}

/** Evaluated in the page: the focused element, or null when the focus fell to the document. */
const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const label = el.getAttribute('aria-label') || (el.labels && el.labels[0] ? el.labels[0].innerText : '');
  const style = getComputedStyle(el);
  const rect = el.getBoundingClientRect();
  return {
    name: (label || el.innerText || '').trim().replace(/\\s+/g, ' '),
    tag: el.tagName.toLowerCase(),
    ring: el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
    inView: rect.width > 0 && rect.height > 0 && rect.bottom > 0 && rect.top < window.innerHeight,
    inDialog: Boolean(el.closest('dialog[open]')),
  };
})()`;

describe('the console with the keyboard alone', function () {
  this.timeout(240_000);
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  const email = `keyboard-${randomUUID()}@example.test`;

  before(async () => {
    stack = await startConsoleStack();
    const signUp = await fetch(`${stack.gateway.url}/api/auth/sign-up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    assert.equal(signUp.status, 201);
    browser = await launchBrowser();
    await browser
      .defaultBrowserContext()
      .overridePermissions(stack.gateway.url, [
        'clipboard-read',
        'clipboard-write',
        'clipboard-sanitized-write',
      ]);
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  const ui = () => consolePage(page, stack.gateway.url);

  async function focused(): Promise<Focused> {
    const now = (await page.evaluate(FOCUSED)) as Focused | null;
    assert.ok(now, 'the focus fell to the document');
    return now;
  }

  /** A key pressed, and where the focus is after it, which must show. */
  async function press(key: KeyInput, shift = false): Promise<Focused> {
    if (shift) await page.keyboard.down('Shift');
    await page.keyboard.press(key);
    if (shift) await page.keyboard.up('Shift');
    const now = await focused();
    assert.ok(now.ring, `no visible focus ring on ${now.tag} “${now.name}”`);
    assert.ok(now.inView, `the focused ${now.tag} “${now.name}” is out of view`);
    return now;
  }

  /** Tab (or Shift+Tab) until `name` has the focus; the names passed on the way. */
  async function tabTo(name: string, shift = false): Promise<string[]> {
    const path: string[] = [];
    for (let i = 0; i < 40; i++) {
      const now = await press('Tab', shift);
      path.push(now.name);
      if (now.name === name) return path;
    }
    assert.fail(`Tab never reached “${name}”: ${path.join(' → ')}`);
  }

  const typeText = (text: string) => page.keyboard.type(text);

  it('signs in, Tab going through the form in order', async () => {
    await ui().go('/sign-in');
    assert.deepEqual(await tabTo('Create an account'), ['Email', 'Password', 'Sign in', 'Create an account']);
    await tabTo('Email', true);
    await typeText(email);
    await press('Tab');
    await typeText(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForFunction(`location.pathname === '/chats'`);
    // The page was replaced: the focus is on its heading, not lost to the document. The console
    // moves it there once the new page has rendered, a moment after the address changed.
    await page.waitForFunction(`${FOCUSED} !== null`);
    assert.equal((await focused()).name, 'New chat');
    assert.equal((await focused()).tag, 'h1');
  });

  it('goes through the page in reading order: header, chat list, conversation', async () => {
    const back = await tabTo('Agent chat', true);
    const forward = await tabTo('Send');
    assert.deepEqual(back, [
      'Favorites only',
      'Search chat titles',
      'New chat',
      'Sign out',
      'Webhooks',
      'API keys',
      'Tools',
      'Chats',
      'Agent chat',
    ]);
    assert.deepEqual(forward, [
      'Chats',
      'Tools',
      'API keys',
      'Webhooks',
      'Sign out',
      'New chat',
      'Search chat titles',
      'Favorites only',
      'Message',
      'Attach files',
      'Plan mode',
      'Send',
    ]);
  });

  it('creates a chat by sending a turn, the focus staying in the composer', async () => {
    await tabTo('Message', true);
    await typeText('hello from the keyboard');
    await tabTo('Send');
    await page.keyboard.press('Enter');
    await page.waitForFunction(`/^\\/chats\\/[0-9a-f-]{36}$/.test(location.pathname)`);
    await ui().seeText('You said: "hello from the keyboard"');
    assert.equal((await focused()).name, 'Message');
  });

  it('sends a plan-mode turn and approves its plan', async () => {
    await typeText('draw an image of a lighthouse');
    await tabTo('Plan mode');
    await page.keyboard.press('Space');
    assert.ok(
      await page.$eval('input[name=planMode]', (el) => (el as unknown as { checked: boolean }).checked),
    );
    await tabTo('Send');
    await page.keyboard.press('Enter');
    await ui().seeText('Plan waiting for your approval');
    const path = await tabTo('Approve', true);
    // Back from the composer: the plan comes just before it.
    assert.deepEqual(path.slice(-2), ['Reject', 'Approve']);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tool img', { timeout: 60_000 });
    await ui().seeText('Approved');
    await ui().seeText('Run complete');
    // Cancel run went with the run's end; the focus, on the plan's heading, stayed.
    const now = await focused();
    assert.equal(now.tag, 'h2');
    assert.match(now.name, /^Plan /);
  });

  it('creates an API key and copies it, the dialog keeping the focus and giving it back', async () => {
    await tabTo('API keys', true);
    await page.keyboard.press('Enter');
    await page.waitForFunction(`location.pathname === '/keys'`);
    await tabTo('Key name');
    await typeText('from the keyboard');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    let now = await focused();
    assert.deepEqual([now.name, now.inDialog], ['Copy', true]);
    await page.keyboard.press('Enter');
    await ui().seeText('is on the clipboard');
    const secret = await ui().valueOf('API key');
    assert.match(secret, /^svck_live_/);
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);

    // Tab and Shift+Tab go round the dialog's three controls and never leave it.
    const round: string[] = [];
    for (let i = 0; i < 4; i++) round.push((await press('Tab')).name);
    for (let i = 0; i < 4; i++) round.push((await press('Tab', true)).name);
    assert.deepEqual(round, ['Done', 'API key', 'Copied', 'Done', 'Copied', 'API key', 'Done', 'Copied']);
    now = await press('Escape');
    assert.equal(now.name, 'Key name', 'the focus goes back to where the dialog was opened from');
    assert.equal(await page.$('dialog[open]'), null);
    assert.ok(!(await ui().pageText()).includes(secret), 'the key is not shown again');
    const works = await fetch(`${stack.gateway.url}/api/v1/chats`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(works.status, 200);
  });

  it('revokes the key after a confirmation that Escape backs out of', async () => {
    await tabTo('Revoke');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    let now = await focused();
    assert.deepEqual([now.name, now.inDialog], ['Keep', true], 'the safe answer has the focus');
    now = await press('Escape');
    assert.equal(now.name, 'Revoke');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    assert.deepEqual(
      [(await press('Tab', true)).name, (await press('Tab', true)).name, (await press('Tab')).name],
      ['Yes, revoke', 'Keep', 'Yes, revoke'],
    );
    await page.keyboard.press('Enter');
    await ui().seeText('No API keys yet.');
    now = await focused();
    assert.deepEqual(
      [now.tag, now.name],
      ['h1', 'API keys'],
      'the row went with its button: the focus is on the heading',
    );
  });
});

describe('the keyboard’s focus on Cancel run when the run ends', function () {
  this.timeout(120_000);
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  const model = new ScriptedModel([{ text: 'A story told slowly, and then to its end.', toolCalls: [] }]);

  before(async () => {
    stack = await startConsoleStack({ model });
    browser = await launchBrowser();
    page = await browser.newPage();
    await signIn(page, stack.gateway.url, await createTestUser());
  });
  after(async () => {
    model.release();
    await browser?.close();
    await stack?.close();
  });

  it('goes to the run’s status, not to the document', async () => {
    const ui = consolePage(page, stack.gateway.url);
    model.holdAfterFirstHalf();
    await ui.go('/chats');
    await ui.fill('Message', 'tell me a story');
    await page.keyboard.down('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.up('Control');
    await ui.seeText('A story told');
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    assert.equal(((await page.evaluate(FOCUSED)) as Focused | null)?.name, 'Cancel run');
    model.release();
    await ui.seeText('Run complete');
    const now = (await page.evaluate(FOCUSED)) as Focused | null;
    assert.equal(now?.name, 'Run complete');
    assert.ok(now.ring, 'its focus ring shows');
  });
});
