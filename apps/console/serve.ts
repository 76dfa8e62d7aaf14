import { createHash } from 'node:crypto';
import path from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Config } from '../../core/config/config';
import type { IdentityOperations } from '../../operations/identity';
import { sessionToken } from '../gateway/middleware/auth';
import { MAX_TEXT } from '../../core/schemas/runs';
import { WEBHOOK_EVENTS } from '../../core/schemas/events';
import {
  FILE_TOO_LARGE_MESSAGE,
  MAX_FILE_BYTES,
  MAX_FILES,
  TOO_MANY_FILES_MESSAGE,
} from '../../core/uploads/receive';

/** The console's pages: each answers the same page, which routes in the browser. */
export const CONSOLE_PAGES = [
  '/',
  '/sign-in',
  '/sign-up',
  '/chats',
  '/chats/:chatId',
  '/keys',
  '/webhooks',
  '/tools',
];
const ASSET_PREFIX = '/console/assets/';

export interface Asset {
  name: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
}

export interface ConsoleBundle {
  /** By file name, e.g. `main-3KX2.js`; names carry a content hash, so they are cached for good. */
  assets: Map<string, Asset>;
  script: string;
  stylesheet: string;
}

function asset(name: string, body: Buffer): Asset {
  return {
    name,
    type: name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
  };
}

/**
 * Built from the pinned npm packages at gateway start, in memory: nothing to run at install time
 * (npm 11 blocks install scripts; esbuild's JS API finds its platform binary without one), and
 * nothing fetched from another origin at run time.
 */
export async function buildConsole(): Promise<ConsoleBundle> {
  const result = await build({
    entryPoints: [path.join(__dirname, 'src', 'main.tsx')],
    tsconfig: path.join(__dirname, 'tsconfig.json'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: 'out',
    entryNames: '[name]-[hash]',
    write: false,
    logLevel: 'silent',
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    assets.set(name, asset(name, Buffer.from(file.contents)));
  }
  const names = [...assets.keys()];
  const script = names.find((n) => n.endsWith('.js'));
  const stylesheet = names.find((n) => n.endsWith('.css'));
  if (!script || !stylesheet) throw new Error('The console build produced no script or stylesheet.');
  return { assets, script, stylesheet };
}

/** What the browser checks before a request, in the API's own words and numbers. */
function limits(): string {
  return JSON.stringify({
    maxFiles: MAX_FILES,
    maxFileBytes: MAX_FILE_BYTES,
    maxText: MAX_TEXT,
    tooManyFiles: TOO_MANY_FILES_MESSAGE,
    fileTooLarge: FILE_TOO_LARGE_MESSAGE,
    webhookEvents: WEBHOOK_EVENTS,
  });
}

const escapeAttribute = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function page(bundle: ConsoleBundle): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="console-limits" content="${escapeAttribute(limits())}">
<title>Agent chat console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSET_PREFIX}${bundle.stylesheet}">
<script type="module" src="${ASSET_PREFIX}${bundle.script}"></script>
</head>
<body><div id="app"><p class="loading">Loading…</p></div><noscript>The console needs JavaScript.</noscript></body>
</html>
`;
}

/**
 * Only this origin: scripts, styles, requests and frames. Media may also come from the public
 * object-storage address when one is configured (asset URLs point there).
 */
export function contentSecurityPolicy(config: Pick<Config, 'ASSET_PUBLIC_BASE_URL'>): string {
  const media = ["'self'", 'blob:', 'data:'];
  if (config.ASSET_PUBLIC_BASE_URL) media.push(new URL(config.ASSET_PUBLIC_BASE_URL).origin);
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${media.join(' ')}`,
    `media-src ${media.join(' ')}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function send(req: Request, res: Response, a: Pick<Asset, 'type' | 'body' | 'gzip' | 'brotli'>): void {
  res.setHeader('content-type', a.type);
  res.setHeader('vary', 'accept-encoding');
  const encoding = req.acceptsEncodings('br', 'gzip', 'identity');
  if (encoding === 'br') return void res.setHeader('content-encoding', 'br').send(a.brotli);
  if (encoding === 'gzip') return void res.setHeader('content-encoding', 'gzip').send(a.gzip);
  res.send(a.body);
}

/** Where the console asks who is signed in (see consoleApp; src/main.tsx asks it). */
const CONSOLE_SESSION_PATH = '/console/api/session';

/**
 * The console at `/`: its pages and their assets; the data comes from the session-guarded routes.
 * Its first question, who is signed in, has an answer of its own: `200 { user: null }` for a
 * visitor not signed in, where `GET /api/auth/session` (public, DECISIONS) answers 401, which a
 * browser reports as an error of every first visit.
 */
export function consoleApp(
  config: Pick<Config, 'ASSET_PUBLIC_BASE_URL'>,
  identity: Pick<IdentityOperations, 'sessionUser'>,
): Router {
  let built: Promise<{ bundle: ConsoleBundle; html: Asset }> | undefined;
  const load = () =>
    (built ??= buildConsole().then((bundle) => ({
      bundle,
      html: { ...asset('index.html', Buffer.from(page(bundle))), type: 'text/html; charset=utf-8' },
    })));
  const csp = contentSecurityPolicy(config);
  const router = Router();
  const servePage: RequestHandler = async (req, res) => {
    const { html } = await load();
    res.setHeader('content-security-policy', csp);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'same-origin');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('etag', `"${createHash('sha1').update(html.body).digest('base64url')}"`);
    if (req.fresh) return void res.status(304).end();
    send(req, res, html);
  };
  for (const p of CONSOLE_PAGES) router.get(p, servePage);
  router.get(CONSOLE_SESSION_PATH, async (req, res) => {
    const user = await identity.sessionUser(sessionToken(req));
    res.setHeader('cache-control', 'no-store');
    res.status(200).json({ user });
  });
  router.get(`${ASSET_PREFIX}:name`, async (req, res, next) => {
    const { bundle } = await load();
    const found = bundle.assets.get(req.params.name);
    if (!found) return next();
    res.setHeader('content-security-policy', csp);
    res.setHeader('cache-control', 'public, max-age=31536000, immutable');
    send(req, res, found);
  });
  return router;
}
