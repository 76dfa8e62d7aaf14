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

    // The Runs operations (the link opens that tag), by their summaries, and the tags around them
    // (the page renders what is near the view): drawn by the page's own script from the document.
    const wanted = ['Queue a turn for the agent', 'Poll a run', 'Chats', 'Uploads', 'Tools'];
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
});
