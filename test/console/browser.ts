import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { ActivityDeps } from '../../activities/deps';
import { embeddedDefaults } from '../../apps/stack/defaults';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import type { TestUser } from '../../testkit/users';
import { startWorker, type TestWorker } from '../../testkit/worker';

/** Debian's chromium, headless, driven by puppeteer-core (its own browser download cannot run here). */

/** Where the screenshots go (CI keeps them as artefacts); docs/images holds a copy of them. */
export const SHOTS =
  process.env.CONSOLE_SCREENSHOTS_DIR ?? path.resolve(__dirname, '../../.scratch/console-screenshots');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 360, height: 740 };

export function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
    defaultViewport: DESKTOP,
  });
}

/**
 * Resolves once the page has painted twice: a full-page screenshot right after the window was
 * resized can show stale paint below a focused control in headless Chromium.
 */
export const painted = (page: Page) =>
  page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');

/** An element by its accessible name (and role), as a screen reader finds it. */
export const aria = (name: string, role?: string) =>
  `::-p-aria(${role ? `[name="${name}"][role="${role}"]` : name})`;

/** A step that names what it waited for when it fails: puppeteer's own timeout names nothing. */
async function step<T>(what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** What a person does on a console page, addressed by accessible names. */
export function consolePage(page: Page, baseUrl: string) {
  const pageText = async () => String(await page.evaluate('document.body.innerText'));
  return {
    go: (pathname: string) =>
      step(`open ${pathname}`, () => page.goto(`${baseUrl}${pathname}`, { waitUntil: 'networkidle0' })),
    click: (name: string, role = 'button') =>
      step(`click the ${role} “${name}”`, () => page.locator(aria(name, role)).click()),
    fill: (name: string, value: string) => step(`fill “${name}”`, () => page.locator(aria(name)).fill(value)),
    pageText,
    seeText: (text: string, timeout = 30_000) =>
      step(`see “${text}”`, () =>
        page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, {
          timeout,
          polling: 100,
        }),
      ),
    valueOf: (name: string) =>
      step(`read the textbox “${name}”`, () =>
        page
          .locator(aria(name, 'textbox'))
          .map((el) => (el as unknown as { value: string }).value)
          .wait(),
      ),
  };
}

export interface ConsoleStack {
  gateway: TestGateway;
  worker: TestWorker | undefined;
  close(): Promise<void>;
}

/**
 * The gateway, and a worker when the test runs turns (the local model unless `deps` has another),
 * on their own task queue. `publicBaseUrl` is the address the browser uses when something (a
 * proxy) stands between it and the gateway's `port`.
 */
export async function startConsoleStack(
  options: { worker?: boolean; deps?: Partial<ActivityDeps>; port?: number; publicBaseUrl?: string } = {},
): Promise<ConsoleStack> {
  const port = options.port ?? (await freePort());
  // As `npm start` serves the console: the local model and image provider, the sign-up grant, no
  // per-address sign-up limit on this machine.
  const config = (await testStack()).config({
    ...embeddedDefaults({
      host: '127.0.0.1',
      filesDir: await mkdtemp(path.join(tmpdir(), 'svc-console-')),
    }),
    TEMPORAL_TASK_QUEUE: `console-${randomUUID()}`,
    PUBLIC_BASE_URL: options.publicBaseUrl ?? `http://127.0.0.1:${port}`,
  });
  const worker = options.worker === false ? undefined : await startWorker({ config, deps: options.deps });
  const gateway = await startGateway({ config, port });
  return {
    gateway,
    worker,
    async close() {
      await gateway.close();
      await worker?.stop();
    },
  };
}

/** The browser signed in as `user`, with the session cookie the sign-in route would have set. */
export async function signIn(page: Page, baseUrl: string, user: TestUser): Promise<void> {
  const [name, value] = user.cookie.split('=') as [string, string];
  await page.setCookie({ name, value, url: baseUrl, httpOnly: true, sameSite: 'Lax' });
}
