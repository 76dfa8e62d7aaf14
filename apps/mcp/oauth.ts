import {
  InvalidGrantError,
  InvalidScopeError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { parse as parseCookie } from 'cookie';
import express, { type Request, type Response, type Router } from 'express';
import { OAUTH_SCOPES, SCOPE_DESCRIPTIONS } from '../../core/auth/scopes';
import { assertSameOrigin } from '../../core/auth/same-origin';
import { sessionCookie, sessionCookieName } from '../../core/auth/tokens';
import { AppError } from '../../core/errors/app-error';
import { credentialsSchema } from '../../core/schemas/identity';
import type { Caller, Operations } from '../../operations';
import { requestedScopes, type AuthorizationRequest } from '../../operations/oauth';

const FORM_LIMIT = '16kb';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Where a client's redirect URI points: its origin, or its scheme for an app's own (`cursor://…`
 * has no origin).
 */
function redirectSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin === 'null' ? url.protocol : url.origin;
}

/**
 * What the consent page's forms may reach: this origin, and the client's redirect, where the
 * answer goes (form-action governs a form's redirect as well). A redirect no CSP source names is
 * left unrestricted rather than blocked: an IPv6 literal (`http://[::1]:…`, which CSP's grammar
 * lacks and browsers ignore), or a host holding `;` or `,`, which would end the directive.
 */
const CSP_SOURCE = /^[a-z][a-z\d+.-]*:(\/\/[\w.-]+(:\d+)?)?$/i;
function consentFormAction(redirectUri: string): string | null {
  const source = redirectSource(redirectUri);
  return CSP_SOURCE.test(source) ? `'self' ${source}` : null;
}

/**
 * A page of the flow; its forms post to `formAction` (this origin unless said otherwise; null:
 * anywhere). No other site may frame it: a framed consent page is one a user can be tricked into
 * clicking.
 */
function page(res: Response, title: string, body: string, formAction: string | null = "'self'"): void {
  const policy = [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    ...(formAction === null ? [] : [`form-action ${formAction}`]),
    "frame-ancestors 'none'",
  ];
  res
    .status(200)
    .type('html')
    .setHeader('cache-control', 'no-store')
    .setHeader('content-security-policy', policy.join('; '))
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
        `<body style="font-family:sans-serif;max-width:32em;margin:3em auto">${body}</body></html>`,
    );
}

async function sessionCaller(ops: Operations, req: Request): Promise<Caller | undefined> {
  const token = parseCookie(req.headers.cookie ?? '')[sessionCookieName(req.secure)];
  return ops.identity.authenticateSession(token, 'mcp').catch(() => undefined);
}

function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/**
 * OAuth 2.1 for MCP clients that connect by sign-in, on the MCP SDK's authorization router
 * (metadata, /register, /authorize, /token, /revoke). Clients are registered public (PKCE S256,
 * no secret to keep); consent is given by the user signed in to the product (the session
 * cookie), on a page of ours; a user not signed in signs in on it first.
 */
export function createOAuthRouter(ops: Operations, options: { issuer: URL; resource: URL }): Router {
  const router = express.Router();

  const provider: OAuthServerProvider = {
    clientsStore: {
      getClient: async (clientId) =>
        (await ops.oauth.getClient(clientId)) as OAuthClientInformationFull | undefined,
      // The SDK mints a secret for a confidential client; we register every client public instead
      // (RFC 7591 lets the server say what it registered), so no client secret is ever stored.
      registerClient: async (client) => {
        const { client_secret: _secret, client_secret_expires_at: _expiry, ...metadata } = client;
        return (await ops.oauth.registerClient({
          ...metadata,
          token_endpoint_auth_method: 'none',
        })) as OAuthClientInformationFull;
      },
    },

    async authorize(client, params, res) {
      const req = res.req;
      const scopes = requestedScopes(params.scopes ?? []);
      if (!scopes) throw new InvalidScopeError(`Scopes offered: ${OAUTH_SCOPES.join(' ')}.`);
      const caller = await sessionCaller(ops, req);
      if (!caller) {
        page(
          res,
          'Sign in',
          `<h1>Sign in to connect ${escapeHtml(client.client_name ?? client.client_id)}</h1>` +
            `<form method="post" action="/oauth/sign-in">` +
            `<input type="hidden" name="next" value="${escapeHtml(req.originalUrl)}">` +
            `<p><label>Email <input name="email" type="email" required></label></p>` +
            `<p><label>Password <input name="password" type="password" required></label></p>` +
            `<button type="submit">Sign in</button></form>`,
        );
        return;
      }
      const request: AuthorizationRequest = {
        clientId: client.client_id,
        redirectUri: params.redirectUri,
        codeChallenge: params.codeChallenge,
        scopes,
        ...(params.state !== undefined ? { state: params.state } : {}),
        ...(params.resource ? { resource: params.resource.href } : {}),
      };
      page(
        res,
        'Allow access',
        `<h1>Allow ${escapeHtml(client.client_name ?? client.client_id)} to use your account?</h1>` +
          `<p>It will be able to:</p><ul>` +
          scopes.map((scope) => `<li>${escapeHtml(SCOPE_DESCRIPTIONS[scope])} (${scope})</li>`).join('') +
          `</ul><p>It will come back to ${escapeHtml(redirectSource(params.redirectUri))}.</p>` +
          `<form method="post" action="/oauth/consent">` +
          `<input type="hidden" name="request" value="${escapeHtml(ops.oauth.signConsent(caller.userId, request))}">` +
          `<button type="submit" name="decision" value="allow">Allow</button> ` +
          `<button type="submit" name="decision" value="deny">Deny</button></form>`,
        consentFormAction(params.redirectUri),
      );
    },

    async challengeForAuthorizationCode(client, code) {
      const row = await ops.oauth.codeFor(client.client_id, code);
      if (!row) throw new InvalidGrantError('The authorization code is invalid or expired.');
      return row.codeChallenge;
    },

    async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource) {
      const row = await ops.oauth.codeFor(client.client_id, code);
      if (!row || (redirectUri !== undefined && redirectUri !== row.redirectUri))
        throw new InvalidGrantError('The authorization code is invalid or expired.');
      if (resource && row.resource && resource.href !== row.resource)
        throw new InvalidGrantError('The code was issued for another resource.');
      const tokens = await ops.oauth.exchangeCode(client.client_id, code);
      if (!tokens) throw new InvalidGrantError('The authorization code is invalid or expired.');
      return tokens;
    },

    async exchangeRefreshToken(client, refreshToken, scopes) {
      const tokens = await ops.oauth.refresh(client.client_id, refreshToken, scopes);
      if (tokens === 'invalid_scope')
        throw new InvalidScopeError('A refresh may only ask for scopes the grant has.');
      if (tokens === 'invalid_grant')
        throw new InvalidGrantError('The refresh token is invalid, spent, expired or revoked.');
      return tokens;
    },

    async verifyAccessToken(token) {
      try {
        const { caller, expiresAt } = await ops.oauth.authenticateAccessToken(token, [], 'mcp');
        return {
          token,
          clientId: caller.oauthGrantId ?? '',
          scopes: [...(caller.scopes ?? [])],
          expiresAt: Math.floor(expiresAt.getTime() / 1000),
        };
      } catch {
        throw new InvalidTokenError('The access token is invalid, expired or revoked.');
      }
    },

    async revokeToken(client, request) {
      await ops.oauth.revokeToken(client.client_id, request.token);
    },
  };

  router.use(
    mcpAuthRouter({
      provider,
      issuerUrl: options.issuer,
      resourceServerUrl: options.resource,
      resourceName: 'Agent Chat Service (MCP)',
      scopesSupported: [...OAUTH_SCOPES],
    }),
  );

  const form = express.urlencoded({ extended: false, limit: FORM_LIMIT });

  // The sign-in form of the authorization page: then back to that page, now signed in.
  router.post('/oauth/sign-in', form, async (req, res) => {
    assertSameOrigin(req.headers, req.protocol, req.get('host'));
    const { email, password, next } = (req.body ?? {}) as Record<string, unknown>;
    // The same rules as the REST sign-in: an address PostgreSQL can look up, a password in bounds.
    const credentials = credentialsSchema.safeParse({ email, password });
    if (!credentials.success || typeof next !== 'string' || !next.startsWith('/authorize?'))
      throw new AppError(
        'INVALID_REQUEST',
        'Email, password and the authorization to return to are required.',
      );
    const { token, maxAgeSeconds } = await ops.identity.signIn(credentials.data, req.ip ?? 'unknown');
    res.setHeader('set-cookie', sessionCookie(req.secure, token, maxAgeSeconds));
    res.redirect(303, next);
  });

  // The consent form: the signed request it carries names the client, redirect and challenge.
  router.post('/oauth/consent', form, async (req, res) => {
    assertSameOrigin(req.headers, req.protocol, req.get('host'));
    const caller = await sessionCaller(ops, req);
    if (!caller) throw new AppError('UNAUTHORIZED', 'Sign in first.');
    const { request: signed, decision } = (req.body ?? {}) as Record<string, unknown>;
    const request = typeof signed === 'string' ? ops.oauth.verifyConsent(caller.userId, signed) : undefined;
    if (!request)
      throw new AppError('INVALID_REQUEST', 'This authorization is invalid or has expired; start again.');
    if (decision !== 'allow') {
      res.redirect(302, redirectWith(request.redirectUri, { error: 'access_denied', state: request.state }));
      return;
    }
    const code = await ops.oauth.issueCode(caller, request);
    res.redirect(302, redirectWith(request.redirectUri, { code, state: request.state }));
  });

  return router;
}
