import assert from 'node:assert/strict';
import puppeteer, { type Browser } from 'puppeteer-core';
import { startGateway, type TestGateway } from '../../testkit/gateway';

/**
 * /docs in a real headless Chromium with every request to another host refused: the page shows
 * the API's operations from what this gateway serves alone, and its policy forbids other origins.
 */
describe('/docs in a browser, offline', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let browser: Browser;

  before(async () => {
    gateway = await startGateway();
    browser = await puppeteer.launch({
      // scripts/test-setup.sh installs Debian's chromium for the test suite.
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('shows the operations with the network cut off, and its policy refuses other origins', async () => {
    const page = await browser.newPage();
    const own = new URL(gateway.url).host;
    const refused: string[] = [];
    const served: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol === 'data:' || url.protocol === 'blob:' || url.host === own) {
        served.push(url.pathname);
        void request.continue();
      } else {
        refused.push(request.url());
        void request.abort('internetdisconnected');
      }
    });
    const res = await page.goto(`${gateway.url}/docs#tag/runs`, { waitUntil: 'load' });
    assert.equal(res?.status(), 200);
    const policy = res?.headers()['content-security-policy'] ?? '';
    assert.match(policy, /default-src 'self'/);
    assert.match(policy, /script-src 'self'(;|$)/);

    // The first Runs operations (the link opens that tag), by their summaries, and the tags around
    // them (the page renders what is near the view): drawn by the page's own script from the document.
    const wanted = ['Queue a turn for the agent', "List the caller's runs", 'Chats', 'Uploads', 'Tools'];
    // Page code as strings: it runs in the browser, and this suite compiles without the DOM's types.
    await page.waitForFunction(
      `${JSON.stringify(wanted)}.every((t) => document.body.innerText.includes(t))`,
      { timeout: 60_000, polling: 200 },
    );
    assert.ok(
      served.some((p) => p.startsWith('/docs/assets/api-reference-')),
      'the script came from here',
    );
    assert.ok(served.includes('/api/v1/openapi.json'));

    // A script of another origin is refused by the policy itself, not only by the cut network.
    const violation = await page.evaluate(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true });
      const script = document.createElement('script');
      script.src = 'https://cdn.jsdelivr.net/npm/@scalar/api-reference';
      document.body.append(script);
    })`);
    assert.equal(violation, 'script-src-elem');
    assert.deepEqual(refused, [], 'the page asked no other host for anything');
  });

  it('shows no control that needs Scalar’s services, logs no error, and tries GET /api/v1/chats unfiltered', async () => {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${gateway.url}/docs#tag/chats/GET/api/v1/chats`, { waitUntil: 'networkidle0' });
    const tryIt = 'Test Request\n(get /api/v1/chats)';
    const controls = `[...document.querySelectorAll('button, a, [role="button"]')]
      .map((el) => (el.innerText || el.getAttribute('aria-label') || '').trim())`;
    await page.waitForFunction(`${controls}.includes(${JSON.stringify(tryIt)})`, {
      timeout: 60_000,
      polling: 200,
    });
    // "Ask AI" sends the document to Scalar's agent, the MCP buttons open Scalar's generator, and
    // the developer tools share and deploy through Scalar's registry: none can work here.
    const shown = new Set((await page.evaluate(controls)) as string[]);
    const vendor = [
      'Ask AI',
      'Generate MCP',
      'Connect MCP',
      'VS Code',
      'Cursor',
      'Developer Tools',
      'Share',
      'Deploy',
    ];
    assert.deepEqual(
      vendor.filter((name) => shown.has(name)),
      [],
    );

    await page.evaluate(`[...document.querySelectorAll('button')]
      .find((b) => b.innerText.trim() === ${JSON.stringify(tryIt)}).click()`);
    // The client's query parameters: a row's checkbox says whether the request sends it.
    const rows = `[...document.querySelectorAll('input[type=checkbox]')].map((box) => ({
      row: (box.closest('tr, li, div')?.innerText ?? '').trim().split('\\n')[0],
      sent: box.checked,
    }))`;
    await page.waitForFunction(`${rows}.some((r) => r.row === 'favorite')`, {
      timeout: 30_000,
      polling: 200,
    });
    const params = (await page.evaluate(rows)) as { row: string; sent: boolean }[];
    assert.deepEqual(
      params.filter((r) => r.row === 'limit' || r.row === 'favorite'),
      [
        { row: 'limit', sent: true },
        { row: 'favorite', sent: false },
      ],
      'a first try lists every chat, not only the favorites',
    );
    assert.deepEqual(errors, []);
  });
});
