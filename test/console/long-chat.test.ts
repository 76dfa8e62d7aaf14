import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { Browser, Page } from 'puppeteer-core';
import { testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { launchBrowser, signIn, startConsoleStack, type ConsoleStack } from './browser';

const COUNT = 500;
const PAGE_SIZE = 50;

/** Messages one second apart, alternating user and agent, some of several paragraphs. */
async function insertMessages(chatId: string): Promise<string[]> {
  const { db } = await testStack();
  const ids = Array.from({ length: COUNT }, () => randomUUID());
  const texts = ids.map(
    (_, i) =>
      `Message ${i + 1} of ${COUNT}. ` +
      'A line of the conversation, long enough to wrap on a phone. '.repeat(1 + (i % 4)) +
      (i % 7 === 0 ? '\n\nA second paragraph.' : ''),
  );
  await db.pool.query(
    `INSERT INTO "Message" (id, "chatId", role, "contentBlocks", "createdAt")
     SELECT id, $2, CASE WHEN n % 2 = 0 THEN 'user' ELSE 'assistant' END::"MessageRole",
            jsonb_build_array(jsonb_build_object('type', 'text', 'text', text)),
            '2026-01-01T00:00:00Z'::timestamptz + n * interval '1 second'
       FROM unnest($1::uuid[], $3::text[]) WITH ORDINALITY AS m(id, text, n)`,
    [ids, chatId, texts],
  );
  return ids;
}

/** Recorded in the page from its first script on: long tasks, and each frame's time while asked. */
const RECORDER = `
  window.__perf = { longTasks: [], frames: [], recording: false };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__perf.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  const frame = (t) => {
    if (window.__perf.recording) window.__perf.frames.push(t);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
`;

interface Perf {
  longTasks: { start: number; duration: number }[];
  frames: number[];
}

const round = (n: number) => Math.round(n * 10) / 10;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

describe('a chat of 500 messages in the console', function () {
  this.timeout(240_000);
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  let user: TestUser;
  let chatId: string;
  let ids: string[];
  const messageRequests: string[] = [];

  before(async () => {
    stack = await startConsoleStack({ worker: false });
    user = await createTestUser();
    const res = await fetch(`${stack.gateway.url}/api/v1/chats`, {
      method: 'POST',
      headers: { ...user.bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'A long conversation' }),
    });
    chatId = ((await res.json()) as { id: string }).id;
    ids = await insertMessages(chatId);
    // The gateway builds the console on the first page asked for: not part of opening a chat.
    assert.equal((await fetch(`${stack.gateway.url}/`)).status, 200);
    browser = await launchBrowser();
    page = await browser.newPage();
    await signIn(page, stack.gateway.url, user);
    await page.evaluateOnNewDocument(RECORDER);
    page.on('request', (req) => {
      if (req.url().includes('/messages')) messageRequests.push(req.url());
    });
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  const rendered = () =>
    page.$$eval('.messages > li', (lis) => lis.map((li) => li.id.slice('message-'.length)));
  // In-page code is given as text: the tests are compiled without the DOM's types.
  const domNodes = async () => Number(await page.evaluate(`document.getElementsByTagName('*').length`));
  const nextFrame = () => page.evaluate(`new Promise((resolve) => requestAnimationFrame(resolve))`);
  const topOf = async (id: string) =>
    Number(await page.evaluate(`document.getElementById(${JSON.stringify(id)}).getBoundingClientRect().top`));
  const shownCount = async () =>
    Number(await page.evaluate(`document.querySelectorAll('.messages > li').length`));

  it('opens on its newest messages with one request and one page in the document', async () => {
    await page.goto(`${stack.gateway.url}/chats/${chatId}`);
    const newest = `message-${ids.at(-1)}`;
    // The time the newest message is first seen in the window, measured in the page from navigation start.
    const shownAt = Number(
      await (
        await page.waitForFunction(
          `(() => {
            const rect = document.getElementById(${JSON.stringify(newest)})?.getBoundingClientRect();
            return rect && rect.top >= 0 && rect.bottom <= window.innerHeight && performance.now();
          })()`,
          { polling: 'raf', timeout: 30_000 },
        )
      ).jsonValue(),
    );
    const shown = await rendered();
    assert.deepEqual(shown, ids.slice(-PAGE_SIZE), 'the latest page, oldest of it first');
    assert.equal(messageRequests.length, 1);
    assert.match(messageRequests[0] ?? '', /order=desc/);
    await page.locator('::-p-aria([name="Show earlier messages"][role="button"])').wait();
    const nodes = await domNodes();
    const navigation = (await page.evaluate(
      `performance.getEntriesByType('navigation').map((e) => e.toJSON())`,
    )) as { domContentLoadedEventEnd: number }[];
    const perf = (await page.evaluate('window.__perf')) as Perf;
    const read = (await page.evaluate(
      `performance.getEntriesByType('resource').filter((e) => e.name.includes('/messages'))
        .map((e) => ({ start: e.startTime, end: e.responseEnd }))`,
    )) as { start: number; end: number }[];
    console.log(
      `      open: newest message shown ${round(shownAt)} ms after navigation start ` +
        `(DOMContentLoaded ${round(navigation[0]?.domContentLoadedEventEnd ?? 0)} ms, the page of messages ` +
        `asked at ${round(read[0]?.start ?? 0)} ms and read by ${round(read[0]?.end ?? 0)} ms); ` +
        `${shown.length} of ${COUNT} messages in the document, ${nodes} elements; ` +
        `${perf.longTasks.length} long tasks (longest ${round(Math.max(0, ...perf.longTasks.map((t) => t.duration)))} ms); ` +
        `load average ${loadavg()[0]?.toFixed(1)}`,
    );
  });

  it('loads older pages as the person scrolls up, keeping the message they read in place', async () => {
    const before = await rendered();
    const reading = `message-${before[0]}`;
    // To the top at once, where the reading message's place is taken before the older page can come.
    const at = Number(
      await page.evaluate(
        `window.scrollTo(0, 0), document.getElementById(${JSON.stringify(reading)}).getBoundingClientRect().top`,
      ),
    );
    await page.waitForFunction(`document.querySelectorAll('.messages > li').length > ${before.length}`);
    await nextFrame();
    const after = await rendered();
    assert.deepEqual(after, ids.slice(-2 * PAGE_SIZE), 'the page before it, above it');
    const moved = (await topOf(reading)) - at;
    assert.ok(Math.abs(moved) <= 2, `the message read moved ${moved} px when the older page came in`);
  });

  it('scrolls up through the whole chat with the wheel, a page loaded at a time', async () => {
    await page.evaluate(
      `window.scrollTo(0, document.documentElement.scrollHeight); window.__perf.recording = true`,
    );
    const longTasksBefore = ((await page.evaluate('window.__perf')) as Perf).longTasks.length;
    const requestsBefore = messageRequests.length;
    await page.mouse.move(800, 400);
    const started = Date.now();
    const counts: number[] = [];
    let wheels = 0;
    for (;;) {
      const shown = { count: await shownCount(), atTop: Number(await page.evaluate('window.scrollY')) === 0 };
      if (counts.at(-1) !== shown.count) counts.push(shown.count);
      if (shown.count === COUNT && shown.atTop) break;
      assert.ok(Date.now() - started < 120_000, `stuck at ${shown.count} messages`);
      await page.mouse.wheel({ deltaY: -400 });
      wheels++;
      await nextFrame();
    }
    const elapsed = Date.now() - started;
    const perf = (await page.evaluate('window.__perf')) as Perf;
    assert.deepEqual(await rendered(), ids, 'every message once, in order');
    // Each page came in once, PAGE_SIZE at a time: no request repeated, none skipped.
    assert.equal(messageRequests.length - requestsBefore, COUNT / PAGE_SIZE - 2);
    assert.deepEqual(
      counts.filter((c) => c % PAGE_SIZE !== 0),
      [],
    );
    const frames = perf.frames.slice(1).map((t, i) => t - (perf.frames[i] ?? t));
    const sorted = [...frames].sort((a, b) => a - b);
    const longTasks = perf.longTasks.slice(longTasksBefore);
    console.log(
      `      scroll: ${wheels} wheel steps of 400 px in ${elapsed} ms, ${messageRequests.length - requestsBefore} pages loaded; ` +
        `${frames.length} frames, interval median ${round(percentile(sorted, 50))} ms, ` +
        `p95 ${round(percentile(sorted, 95))} ms, max ${round(sorted.at(-1) ?? 0)} ms, ` +
        `${frames.filter((f) => f > 50).length} over 50 ms; ${longTasks.length} long tasks ` +
        `(longest ${round(Math.max(0, ...longTasks.map((t) => t.duration)))} ms); ` +
        `${await domNodes()} elements with all ${COUNT} messages in the document; load average ${loadavg()[0]?.toFixed(1)}`,
    );
  });
});
