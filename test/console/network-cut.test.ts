import assert from 'node:assert/strict';
import type { Browser, Page } from 'puppeteer-core';
import { freePort } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { ScriptedModel } from '../support/scripted-model';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';
import { consolePage, launchBrowser, signIn, startConsoleStack, type ConsoleStack } from './browser';

const ANSWER =
  'Once upon a time a stream was cut in the middle of a sentence, and the reader still got every word of it once.';
const FIRST_HALF = ANSWER.slice(0, Math.ceil(ANSWER.length / 2));

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/**
 * The browser reaches the gateway through a TCP proxy that the test switches off (every connection
 * reset, new ones refused) and on again, as a network cut and its return would.
 */
describe('the console through a network cut in the middle of a turn', function () {
  this.timeout(240_000);
  let proxy: TcpProxy;
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  let user: TestUser;
  let url: string;
  const model = new ScriptedModel([
    { text: ANSWER, toolCalls: [] },
    { text: ANSWER, toolCalls: [] },
  ]);
  /** By request id: what the browser asked for, and the Last-Event-ID it sent on the wire. */
  const streams = new Map<string, { url?: string; sent?: boolean; lastEventId?: string }>();
  /** The stream's requests in order, each with the Last-Event-ID it carried. */
  const streamRequests = () => [...streams.values()].filter((s) => s.url);

  before(async () => {
    const port = await freePort();
    proxy = await startTcpProxy(`127.0.0.1:${port}`);
    url = `http://${proxy.address}`;
    stack = await startConsoleStack({ port, publicBaseUrl: url, model });
    user = await createTestUser();
    browser = await launchBrowser();
    page = await browser.newPage();
    await signIn(page, url, user);
    // The headers as sent on the wire (Last-Event-ID is added below the page's own request).
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.url.endsWith('/events'))
        streams.set(e.requestId, { ...streams.get(e.requestId), url: e.request.url });
    });
    cdp.on('Network.requestWillBeSentExtraInfo', (e) => {
      const header = Object.entries(e.headers).find(([name]) => name.toLowerCase() === 'last-event-id');
      streams.set(e.requestId, { ...streams.get(e.requestId), sent: true, lastEventId: header?.[1] });
    });
  });
  after(async () => {
    model.release();
    await browser?.close();
    await proxy?.close();
    await stack?.close();
  });

  /** A run's path under /chats (as the console asks for it), ended on the gateway's side. */
  const runEnded = (runPath: string) =>
    waitFor(
      async () => {
        const res = await fetch(`${stack.gateway.url}/api/v1${runPath}`, { headers: user.bearer });
        return ((await res.json()) as { status: string }).status === 'COMPLETE' ? true : undefined;
      },
      { what: 'the run to end' },
    );

  /** Once the connection is back: the answer in the chat, once, and neither a reconnecting note nor an error. */
  async function answerShownOnce(): Promise<void> {
    await page.waitForFunction(
      `[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.includes(${JSON.stringify(ANSWER)}))`,
      { timeout: 30_000, polling: 100 },
    );
    await page.waitForFunction(`!document.body.innerText.includes('Connection lost')`);
    const text = await consolePage(page, url).pageText();
    assert.equal(occurrences(text, ANSWER), 1, 'the whole answer, once');
    assert.equal(occurrences(text, FIRST_HALF), 1, 'the first half is not left over from the live text');
    assert.equal(await page.$('.text.live'), null);
    assert.equal(await page.$('[role=alert]'), null, 'no error shown');
  }

  it('shows that it is reconnecting, resumes with Last-Event-ID, and ends with the whole answer once', async () => {
    const ui = consolePage(page, url);
    model.holdAfterFirstHalf();
    await ui.go('/chats');
    await ui.fill('Message', 'tell me a story');
    await ui.click('Send');
    await page.waitForSelector('.text.live');
    await ui.seeText(FIRST_HALF);
    const [first, ...others] = streamRequests();
    assert.deepEqual(others, []);
    assert.equal(first?.lastEventId, undefined);
    const runPath = /\/chats\/[^/]+\/runs\/[^/]+(?=\/events$)/.exec(first?.url ?? '')?.[0] ?? '';

    await proxy.down();
    await ui.seeText('Connection lost: reconnecting');
    // The run goes on without the browser, and ends while it is cut off.
    model.release();
    await runEnded(runPath);
    // The browser tries again every few seconds; a try refused changes nothing on the page.
    await waitFor(async () => (streamRequests().length >= 2 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'a try to open the stream again while cut off',
    });
    assert.ok((await ui.pageText()).includes('Connection lost: reconnecting'));
    assert.ok(!(await ui.pageText()).includes(ANSWER), 'nothing of the second half came through the cut');

    await proxy.up();
    await answerShownOnce();

    // The browser opened the stream again (tries refused while the proxy was off never sent their
    // headers) with the id of the last event it had: the gateway went on from there, no snapshot.
    const [, ...again] = streamRequests();
    const sent = again.filter((s) => s.sent);
    assert.ok(sent.length >= 1, 'the stream was opened again');
    for (const s of sent) assert.match(s.lastEventId ?? '', /^\d+$/);
    console.log(
      `      ${again.length} tries to open the stream again, ${sent.length} reaching the gateway, ` +
        `with Last-Event-ID ${[...new Set(sent.map((s) => s.lastEventId))].join(', ')}`,
    );
  });

  it('polls when the stream cannot be had, and rides out the same cut', async () => {
    const ui = consolePage(page, url);
    model.holdAfterFirstHalf();
    // A proxy in between that refuses streams (503) leaves the console to polling.
    await page.setRequestInterception(true);
    const polls: string[] = [];
    page.on('request', (req) => {
      if (req.isInterceptResolutionHandled()) return;
      if (req.url().endsWith('/events')) return void req.respond({ status: 503, body: 'no streams here' });
      if (/\/runs\/[^/]+$/.test(req.url())) polls.push(req.url());
      void req.continue();
    });
    await ui.go('/chats');
    await ui.fill('Message', 'tell me another story');
    await ui.click('Send');
    await ui.seeText(FIRST_HALF);
    assert.ok(polls.length >= 1, 'the run was polled');
    const runPath = new URL(polls[0] ?? '').pathname.replace(/^\/console\/api\/v1/, '');

    await proxy.down();
    await ui.seeText('Connection lost: reconnecting');
    model.release();
    await runEnded(runPath);
    await proxy.up();
    await answerShownOnce();
  });
});
