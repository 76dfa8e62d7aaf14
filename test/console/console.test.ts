import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import axe from 'axe-core';
import type { Browser, Page } from 'puppeteer-core';
import type { TestGateway } from '../../testkit/gateway';
import { createTestUser } from '../../testkit/users';
import { sessionCookieName } from '../../core/auth/tokens';
import { oauthFlow } from '../support/oauth';
import { solidPng } from '../support/fake-providers';
import {
  DESKTOP,
  PHONE,
  SHOTS,
  aria,
  painted,
  consolePage,
  launchBrowser,
  startConsoleStack,
  type ConsoleStack,
} from './browser';

const PASSWORD = 'a long enough password';

/** A webhook receiver that fails until told to answer. */
async function startReceiver() {
  const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
  const state = { failing: true };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.statusCode = state.failing ? 500 : 200;
      res.end(state.failing ? 'down' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the console in a browser', function () {
  this.timeout(240_000);
  let stack: ConsoleStack;
  let gateway: TestGateway;
  let browser: Browser;
  let page: Page;
  const otherOrigins: string[] = [];
  const email = `console-${randomUUID()}@example.test`;

  before(async () => {
    stack = await startConsoleStack();
    gateway = stack.gateway;
    await mkdir(SHOTS, { recursive: true });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith(gateway.url) && !/^(data|blob):/.test(url)) otherOrigins.push(url);
    });
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  const ui = () => consolePage(page, gateway.url);
  const go = (pathname: string) => ui().go(pathname);
  const click = (name: string, role = 'button') => ui().click(name, role);
  const fill = (name: string, value: string) => ui().fill(name, value);
  const seeText = (text: string, timeout?: number) => ui().seeText(text, timeout);
  const valueOf = (name: string) => ui().valueOf(name);

  /**
   * Presses Refresh, as a person watching the deliveries would, until `text` shows: each press
   * waits for the list's answer and then gives the page a second to show it.
   */
  async function refreshUntil(text: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const shown = () =>
      seeText(text, 1_000).then(
        () => true,
        () => false,
      );
    while (!(await shown())) {
      assert.ok(Date.now() < deadline, `the page never showed ${text}`);
      await Promise.all([
        page.waitForResponse((res) => res.url().endsWith('/deliveries') && res.request().method() === 'GET'),
        click('Refresh'),
      ]);
    }
  }

  /** axe-core finds no serious or critical violation; the page fits 360 px; screenshots at both widths. */
  async function checkPage(name: string): Promise<void> {
    await page.evaluate(axe.source);
    // Evaluated by the DevTools protocol, which the page's CSP does not govern.
    const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as {
      id: string;
      impact: string | null;
      nodes: string[];
    }[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious, [], `axe on the ${name} page`);
    await page.screenshot({ path: path.join(SHOTS, `console-${name}-desktop.png`), fullPage: true });
    await page.setViewport(PHONE);
    await painted(page);
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    assert.ok(overflow <= 0, `the ${name} page is ${overflow} px wider than a 360 px window`);
    await page.screenshot({ path: path.join(SHOTS, `console-${name}-phone.png`), fullPage: true });
    await page.setViewport(DESKTOP);
  }

  it('serves the console at / with a policy that forbids other origins', async () => {
    const res = await fetch(`${gateway.url}/`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'/);
  });

  it('signs up and signs in, and a signed-out visitor is sent to sign-in', async () => {
    await go('/');
    await page.locator(aria('Sign in', 'button')).wait();
    await checkPage('sign-in');
    await click('Create an account', 'link');
    await page.locator(aria('Sign up', 'button')).wait();
    await checkPage('sign-up');
    await fill('Email', email);
    await fill('Password', PASSWORD);
    await click('Sign up');
    await page.locator(aria('New chat', 'button')).wait();
    assert.equal(new URL(page.url()).pathname, '/chats');
    await checkPage('chats-empty');

    await click('Sign out');
    await page.locator(aria('Sign in', 'button')).wait();
    await fill('Email', email);
    await fill('Password', PASSWORD);
    await click('Sign in');
    await page.locator(aria('Chats', 'link')).wait();
  });

  it('creates an API key, shows it once, and revokes it after a confirmation', async () => {
    await click('API keys', 'link');
    await fill('Key name', 'ci');
    await click('Create key');
    const secret = await valueOf('API key');
    assert.match(secret, /^svck_live_/);
    await seeText('It will not be shown again');
    const works = await fetch(`${gateway.url}/api/v1/chats`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(works.status, 200);
    await checkPage('keys-created');

    await page.reload({ waitUntil: 'networkidle0' });
    await seeText(secret.slice(0, 14));
    assert.ok(!(await page.content()).includes(secret), 'the full key is shown only once');

    await click('Revoke');
    await click('Yes, revoke');
    await seeText('No API keys yet.');
    const revoked = await fetch(`${gateway.url}/api/v1/chats`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    assert.equal(revoked.status, 401);
  });

  it('lists an assistant connected by OAuth beside the keys, and revokes it', async () => {
    // The signed-in person's session, as the authorization page sees it when they allow an assistant.
    const session = (await page.cookies()).find((c) => c.name === sessionCookieName(false));
    assert.ok(session, 'the console is signed in');
    const { tokens } = await oauthFlow(gateway.url, `${session.name}=${session.value}`).grant(
      undefined,
      'Desk assistant',
    );
    const mcp = (accessToken: string) =>
      fetch(`${gateway.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    assert.equal((await mcp(tokens.access_token)).status, 200);

    await page.reload({ waitUntil: 'networkidle0' });
    await seeText('Desk assistant');
    assert.ok(!(await page.content()).includes(tokens.access_token), 'no token is shown');
    await checkPage('keys-assistants');
    await click('Revoke Desk assistant');
    await click('Yes, revoke');
    await seeText('No assistant is connected.');
    assert.equal((await mcp(tokens.access_token)).status, 401);
  });

  it('refuses too many files before uploading, and shows a plain turn’s text and image', async () => {
    await click('Chats', 'link');
    const dir = await mkdtemp(path.join(tmpdir(), 'svc-console-files-'));
    const png = path.join(dir, 'square.png');
    await writeFile(png, await solidPng(32, 32, { r: 200, g: 40, b: 40 }));
    const many = await Promise.all(
      Array.from({ length: 9 }, async (_, i) => {
        const file = path.join(dir, `${i}.png`);
        await writeFile(file, 'x');
        return file;
      }),
    );
    const files = await page.$('input[type=file]');
    assert.ok(files);
    await files.uploadFile(...many);
    await seeText('At most 8 files may be sent in one request.');
    assert.ok(
      await page.$eval(aria('Send', 'button'), (b) => (b as unknown as { disabled: boolean }).disabled),
    );
    await files.uploadFile(png);
    await fill('Message', 'hello from the browser');
    await click('Send');
    await page.waitForFunction(`/^\\/chats\\/[0-9a-f-]{36}$/.test(location.pathname)`);
    await seeText('I am the local agent');
    const address = page.url();
    await page.reload({ waitUntil: 'networkidle0' });
    assert.equal(page.url(), address);
    await seeText('You said: "hello from the browser"');
    await page.waitForSelector('.message.user img[alt="square.png"]');
    await checkPage('chat');
  });

  /** A new chat whose first turn, in plan mode, waits for the plan's approval. */
  async function planWaiting(text: string): Promise<void> {
    await click('New chat');
    await fill('Message', text);
    await click('Plan mode', 'checkbox');
    await click('Send');
    await seeText('Plan waiting for your approval');
  }

  it('shows a plan, and approving it runs the image tool whose result is shown', async () => {
    await planWaiting('draw an image of a lighthouse');
    await seeText('ai_image_2');
    await checkPage('plan');
    await click('Approve');
    await page.waitForSelector('.message.assistant img, .tool img', { timeout: 60_000 });
    await seeText('Approved');
    await seeText('10 credits');
    await checkPage('chat-image');
  });

  it('shows the active run on a send into its chat, and rejects a plan with feedback', async () => {
    await planWaiting('draw an image of a storm');
    await fill('Message', 'and another thing');
    await click('Send');
    await seeText('already has a run in progress');
    await fill('Feedback', 'not this one');
    await click('Reject');
    await seeText('Run cancelled');
    await seeText('Rejected');
    await seeText('not this one');
  });

  it('runs a direct tool from its form and shows the result and its cost', async () => {
    await click('Tools', 'link');
    await fill('Prompt', 'a red kite');
    await click('Run ai_image_2');
    await page.waitForSelector('.result img', { timeout: 60_000 });
    await seeText('Cost: 10 credits');
    await checkPage('tools');
  });

  it('shows a failed delivery to a webhook endpoint and redelivers it once the receiver answers', async () => {
    const receiver = await startReceiver();
    try {
      await click('Webhooks', 'link');
      await fill('Endpoint URL', receiver.url);
      for (const event of ['agent.started', 'agent.failed', 'tool.completed']) await click(event, 'checkbox');
      await click('Add endpoint');
      const secret = await valueOf('Signing secret');
      assert.match(secret, /^svcwhsec_/);
      await click('Done');

      await click('Chats', 'link');
      await fill('Message', 'hello, webhook');
      await click('Send');
      await seeText('You said: "hello, webhook"');

      await click('Webhooks', 'link');
      await click('Deliveries');
      // Four attempts, 1 s, 5 s and 15 s apart: FAILED after some 21 s.
      await refreshUntil('FAILED', 90_000);
      await seeText('500');
      await checkPage('webhooks');

      receiver.state.failing = false;
      await click('Redeliver');
      await refreshUntil('DELIVERED', 30_000);
      const last = receiver.received.at(-1);
      assert.ok(last);
      const signed = `${String(last.headers['x-svc-timestamp'])}.${last.body}`;
      assert.equal(
        last.headers['x-svc-signature'],
        `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`,
      );
    } finally {
      await receiver.close();
    }
  });

  it('answers “not found” for another user’s chat typed into the address bar', async () => {
    const other = await createTestUser();
    const res = await fetch(`${gateway.url}/api/v1/chats`, {
      method: 'POST',
      headers: { ...other.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'secret plans' }),
    });
    const { id } = (await res.json()) as { id: string };
    await go(`/chats/${id}`);
    await seeText('Chat not found');
    assert.ok(!(await page.content()).includes('secret plans'));
    await checkPage('chat-not-found');
  });

  it('loaded nothing from another origin', () => {
    assert.deepEqual(otherOrigins, []);
  });
});
