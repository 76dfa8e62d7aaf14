import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { build } from 'esbuild';
import type { Browser, Page } from 'puppeteer-core';
import { launchBrowser } from '../console/browser';
import { ScriptedModel } from '../support/scripted-model';
import { startService, type TestService } from '../support/service';
import { waitFor } from '../support/wait';

/**
 * The typed client's transport for the AI SDK's `useChat` (issue 49), the way a React app uses it:
 * test/clients/use-chat-app is such an app, bundled with React and @ai-sdk/react, served from one
 * origin with the API behind it (as an app's own server would proxy it), in headless Chromium.
 */
describe('useChat with the client transport (React, in a browser)', function () {
  this.timeout(120_000);
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let server: Server;
  let origin: string;
  const model = new ScriptedModel([]);
  const pageErrors: string[] = [];

  before(async () => {
    service = await startService('use-chat', model);
    const bundle = await build({
      entryPoints: [path.join(__dirname, 'use-chat-app/app.tsx')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      jsx: 'automatic',
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]!.contents;
    server = createServer((req, res) => {
      if (req.url?.startsWith('/api/')) {
        // The app's origin passes the API through, streams included, and drops it when the page does.
        const upstream = new AbortController();
        res.on('close', () => upstream.abort());
        void (async () => {
          try {
            const body = req.method === 'GET' ? undefined : (Readable.toWeb(req) as ReadableStream);
            const answer = await fetch(`${service.gateway.url}${req.url}`, {
              method: req.method,
              headers: Object.fromEntries(
                Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection'),
              ) as Record<string, string>,
              body,
              duplex: 'half',
              signal: upstream.signal,
            } as RequestInit);
            res.writeHead(answer.status, Object.fromEntries(answer.headers));
            if (answer.body)
              Readable.fromWeb(answer.body as never)
                .on('error', () => res.destroy())
                .pipe(res);
            else res.end();
          } catch {
            res.destroy();
          }
        })();
        return;
      }
      if (req.url?.startsWith('/app.js')) {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        return void res.end(script);
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/app.js"></script>',
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    page.on('console', (msg) => msg.type() === 'error' && pageErrors.push(msg.text()));
  });
  after(async () => {
    model.release();
    await browser?.close();
    server?.close();
    await service?.stop();
  });

  const text = (selector: string) =>
    page.$$eval(selector, (els) => els.map((el) => (el as unknown as { innerText: string }).innerText));
  const see = (what: string, fn: string) =>
    page.waitForFunction(fn, { timeout: 30_000, polling: 50 }).catch(async (err: Error) => {
      const body = String(await page.evaluate('document.body.innerText'));
      throw new Error(
        `waiting for ${what}: ${err.message}; the page shows ${JSON.stringify(body)}; errors: ${pageErrors.join('; ')}`,
      );
    });
  const seeStatus = (status: string) =>
    see(
      `status ${status}`,
      `document.querySelector('[aria-label=status]')?.innerText === ${JSON.stringify(status)}`,
    );
  /** The page's answer `index` reads `answer`, or with `partly`, begins with it. */
  const seeAnswer = (index: number, answer: string, partly = false) =>
    see(
      `answer ${index} to read ${answer}`,
      `[...document.querySelectorAll('[data-role=assistant]')][${index}]?.innerText${partly ? '.startsWith' : ' === '}(${JSON.stringify(answer)})`,
    );
  const send = async (message: string) => {
    await page.locator('[aria-label=message]').fill(message);
    await page.locator('button[type=submit]').click();
  };
  const runs = async (chatId: string) => {
    const res = await fetch(`${service.gateway.url}/api/v1/chats/${chatId}/runs`, {
      headers: service.user.bearer,
    });
    return ((await res.json()) as { data: { id: string; status: string }[] }).data;
  };
  const chatOfPage = () => new URL(page.url()).searchParams.get('chat') ?? '';

  it('sends, streams the answer, stops a run (it ends CANCELLED), resumes a run after a reload and regenerates an answer', async () => {
    await page.goto(`${origin}/?key=${service.user.apiKey}`);
    model.replies.push({ text: 'Hello from the service.', toolCalls: [] });
    await send('hello');
    await seeAnswer(0, 'Hello from the service.');
    await seeStatus('ready');
    const chatId = chatOfPage();
    assert.match(chatId, /^[0-9a-f-]{36}$/, 'the app was told the chat the send created');
    // The assistant message is the service's: its id is the run's assistant message.
    const [first] = await runs(chatId);
    const snapshot = (await (
      await fetch(`${service.gateway.url}/api/v1/chats/${chatId}/runs/${first!.id}`, {
        headers: service.user.bearer,
      })
    ).json()) as { assistantMessageId: string; status: string };
    assert.equal(snapshot.status, 'COMPLETE');
    const ids = await page.$$eval('[data-role=assistant]', (els) =>
      els.map((el) => el.getAttribute('data-id')),
    );
    assert.deepEqual(ids, [snapshot.assistantMessageId]);

    // Stop: the half-streamed run is cancelled in the service, not only left unread.
    model.holdAfterFirstHalf();
    model.replies.push({ text: 'This answer is stopped halfway.', toolCalls: [] });
    await send('say something long');
    await seeAnswer(1, 'This answer is', true);
    await page.locator('::-p-text(Stop)').click();
    await seeStatus('ready');
    const stopped = await waitFor(async () => {
      const [latest] = await runs(chatId);
      return latest?.status === 'CANCELLED' ? latest : undefined;
    });
    assert.ok(stopped);

    // A reload while a run streams: useChat({ resume: true }) follows it from its snapshot.
    model.holdAfterFirstHalf();
    model.replies.push({ text: 'Resumed after the reload.', toolCalls: [] });
    await send('and now?');
    await seeAnswer(2, 'Resumed after', true);
    await page.reload();
    await see('the resumed answer so far', `document.body.innerText.includes('Resumed after')`);
    model.release();
    await see('the whole resumed answer', `document.body.innerText.includes('Resumed after the reload.')`);
    await seeStatus('ready');
    assert.deepEqual(await text('[data-role=assistant]'), ['Resumed after the reload.']);

    // Regenerate: a new run answering the same message; the earlier answer stays in the chat.
    model.replies.push({ text: 'A second opinion.', toolCalls: [] });
    await page.locator('::-p-text(Regenerate)').click();
    await see('the regenerated answer', `document.body.innerText.includes('A second opinion.')`);
    await seeStatus('ready');
    const all = await runs(chatId);
    assert.deepEqual(
      all.map((r) => r.status),
      ['COMPLETE', 'COMPLETE', 'CANCELLED', 'COMPLETE'],
    );
    const messages = (await (
      await fetch(`${service.gateway.url}/api/v1/chats/${chatId}/messages?limit=50`, {
        headers: service.user.bearer,
      })
    ).json()) as { data: { role: string; contentBlocks: { type: string; text?: string }[] }[] };
    // Every finished answer is kept, the regenerated one too (the stopped run left none).
    assert.deepEqual(
      messages.data
        .filter((m) => m.role === 'assistant')
        .map((m) => m.contentBlocks.map((b) => b.text ?? '').join('')),
      ['Hello from the service.', 'Resumed after the reload.', 'A second opinion.'],
    );
  });
});
