import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { SCOPE_DESCRIPTIONS, type OAuthScope } from '../../core/auth/scopes';
import type { ClientShown } from '../../operations/oauth';

/**
 * The pages of the OAuth flow (sign-in, consent, error), served by the gateway without the
 * console's bundle: plain HTML with one inline stylesheet in the console's look (its colours,
 * type, inputs and buttons, apps/console/src/styles.css), laid out for a phone as for a desktop.
 * No script runs on them.
 */
const STYLE = `
:root {
  color-scheme: light;
  --fg: #1b1f24;
  --muted: #57606a;
  --line: #d0d7de;
  --soft: #f6f8fa;
  --accent: #0a58ca;
  --danger: #b42318;
  font: 16px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  color: var(--fg);
  background: #fff;
}
* { box-sizing: border-box; }
body { margin: 0; }
.top { padding: 0.6rem 1rem; border-bottom: 1px solid var(--line); background: var(--soft); font-weight: 700; }
main { max-width: 28rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin: 0.5rem 0 0.75rem; overflow-wrap: anywhere; }
p { margin: 0.6rem 0; }
a { color: var(--accent); }
label { display: block; margin: 0.6rem 0; }
input {
  display: block; width: 100%; font: inherit; color: var(--fg); background: #fff;
  padding: 0.45rem 0.5rem; margin-top: 0.2rem; border: 1px solid #8c959f; border-radius: 6px;
}
button {
  font: inherit; padding: 0.45rem 1rem; min-height: 2.5rem; cursor: pointer;
  border: 1px solid var(--line); border-radius: 6px; background: var(--soft); color: var(--fg);
}
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin-top: 1rem; }
.actions button { flex: 1 1 8rem; }
.app { border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem; margin: 0.75rem 0; overflow-wrap: anywhere; }
.app.unverified { background: #fff4e5; border-color: #f0b429; }
.name { font-weight: 700; }
.badge {
  display: inline-block; margin-left: 0.35rem; padding: 0 0.45rem; border-radius: 999px; vertical-align: 0.1em;
  font-size: 0.75rem; font-weight: 700; letter-spacing: 0.02em; color: #7a4a00; background: #fff; border: 1px solid #f0b429;
}
.muted { color: var(--muted); }
.error { color: var(--danger); font-weight: 600; }
ul { padding-left: 1.25rem; }
li { margin: 0.3rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85rem; }
`;
/** The stylesheet by its hash in the pages' policy: no other style, inline or not, applies. */
const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface OAuthPage {
  status: number;
  title: string;
  body: string;
  /** Where the page's forms may post besides this origin (null: anywhere; see consentFormAction). */
  formAction?: string | null;
}

/**
 * Sends a page of the flow. No other site may frame it (a framed consent page is one a user can
 * be tricked into clicking), it is never cached, and it sends no Referer: its address holds the
 * authorization request.
 */
export function sendPage(res: Response, page: OAuthPage): void {
  const formAction = page.formAction === undefined ? "'self'" : page.formAction;
  const policy = [
    "default-src 'none'",
    `style-src ${STYLE_SOURCE}`,
    "base-uri 'none'",
    ...(formAction === null ? [] : [`form-action ${formAction}`]),
    "frame-ancestors 'none'",
  ];
  res
    .status(page.status)
    .type('html')
    .setHeader('cache-control', 'no-store')
    .setHeader('content-security-policy', policy.join('; '))
    .setHeader('referrer-policy', 'no-referrer')
    .setHeader('x-content-type-options', 'nosniff')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
        `<meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>${escapeHtml(page.title)} · Agent chat</title><style>${STYLE}</style></head>` +
        `<body><header class="top">Agent chat</header><main>${page.body}</main></body></html>`,
    );
}

const nameOf = (client: ClientShown) => client.name ?? 'An unnamed app';

/** The app as a person should weigh it: a name nobody checked, and where its answer goes. */
function appCard(client: ClientShown): string {
  return (
    `<div class="app unverified"><p><span class="name">${escapeHtml(nameOf(client))}</span>` +
    `<span class="badge">Unverified</span></p>` +
    `<p class="muted">This name was chosen by the app itself; nobody has checked who made it. ` +
    `Its answer goes to <strong>${escapeHtml(client.redirectTo)}</strong>.</p></div>`
  );
}

/** The sign-in form of an authorization; again after a failed attempt, with why and the email kept. */
export function signInPage(input: {
  client: ClientShown;
  next: string;
  email?: string;
  error?: { status: number; message: string };
}): OAuthPage {
  const { client, next, email, error } = input;
  return {
    status: error?.status ?? 200,
    title: 'Sign in',
    body:
      `<h1>Sign in to connect an app</h1>` +
      appCard(client) +
      `<p>Sign in to see what it asks to do. Nothing is shared before you allow it.</p>` +
      (error ? `<p class="error" role="alert">${escapeHtml(error.message)}</p>` : '') +
      `<form method="post" action="/oauth/sign-in">` +
      `<input type="hidden" name="next" value="${escapeHtml(next)}">` +
      // The field to type in next: the email, or after a failed attempt the password.
      `<label>Email<input name="email" type="email" autocomplete="username" required` +
      `${email ? ` value="${escapeHtml(email)}"` : ' autofocus'}></label>` +
      `<label>Password<input name="password" type="password" autocomplete="current-password" required` +
      `${email ? ' autofocus' : ''}></label>` +
      `<div class="actions"><button class="primary" type="submit">Sign in</button></div></form>` +
      `<p class="muted">No account yet? <a href="/sign-up">Create one</a>, then connect again from the app.</p>`,
  };
}

/**
 * Where the consent form may post: this origin, and the client's redirect, where the answer goes
 * (form-action governs a form's redirect as well). A redirect no CSP source names, an IPv6 literal
 * (`http://[::1]:…`, which CSP's grammar lacks and browsers ignore), leaves it unrestricted rather
 * than blocked.
 */
const CSP_SOURCE = /^[a-z][a-z\d+.-]*:(\/\/[\w.-]+(:\d+)?)?$/i;
const consentFormAction = (redirectTo: string) =>
  CSP_SOURCE.test(redirectTo) ? `'self' ${redirectTo}` : null;

export function consentPage(input: { client: ClientShown; scopes: OAuthScope[]; signed: string }): OAuthPage {
  const { client, scopes, signed } = input;
  return {
    status: 200,
    title: 'Allow access',
    formAction: consentFormAction(client.redirectTo),
    body:
      `<h1>Allow ${escapeHtml(nameOf(client))} to use your account?</h1>` +
      appCard(client) +
      `<p>Allow only if you have just asked this app to connect. It will be able to:</p><ul>` +
      scopes
        .map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope])} <code>${scope}</code></li>`)
        .join('') +
      `</ul><p class="muted">You can disconnect it at any time on the console’s API keys page.</p>` +
      `<form method="post" action="/oauth/consent">` +
      `<input type="hidden" name="request" value="${escapeHtml(signed)}">` +
      `<div class="actions"><button class="primary" type="submit" name="decision" value="allow">Allow</button>` +
      `<button type="submit" name="decision" value="deny">Deny</button></div></form>`,
  };
}

/** Why the flow stops here, on our own page: nothing is sent to the app. */
export function errorPage(status: number, message: string): OAuthPage {
  return {
    status,
    title: 'Cannot connect',
    body:
      `<h1>This app cannot be connected</h1>` +
      `<p class="error" role="alert">${escapeHtml(message)}</p>` +
      `<p>Nothing was shared with the app. Close this page and start again from the app, or ` +
      `<a href="/">open the console</a>.</p>`,
  };
}
