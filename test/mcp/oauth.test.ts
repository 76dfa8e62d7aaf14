import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { hashToken } from '../../core/auth/tokens';
import { startGateway, type TestGateway } from '../../testkit/gateway';
import { freePort, testStack } from '../../testkit/stack';
import { createTestUser, type TestUser } from '../../testkit/users';
import { OAUTH_REDIRECT, oauthFlow } from '../support/oauth';
import { launchBrowser } from '../console/browser';

const REDIRECT = OAUTH_REDIRECT;

/** The SDK client's side of OAuth, kept in memory as an assistant would keep it. */
class AssistantAuth implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Test assistant',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation = () => this.client;
  saveClientInformation = (client: OAuthClientInformationMixed) => void (this.client = client);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => {
    assert.ok(this.verifier);
    return this.verifier;
  };
}

describe('MCP over OAuth 2.1', function () {
  this.timeout(60_000);
  let gateway: TestGateway;
  let user: TestUser;
  let base: string;
  let flow: ReturnType<typeof oauthFlow>;

  before(async () => {
    const stack = await testStack();
    // The issuer and resource the metadata names must be where the client connects.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gateway = await startGateway({ config: stack.config({ PUBLIC_BASE_URL: base }), port });
    user = await createTestUser();
    flow = oauthFlow(base, user.cookie);
  });
  after(async () => {
    await gateway?.close();
  });

  /** One JSON-RPC request to /mcp with this access token. */
  const post = (accessToken: string, method: string, params: Record<string, unknown>) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
  const initialize = (accessToken: string) =>
    post(accessToken, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });

  it('registers, authorizes with the signed-in session, calls, refreshes (rotating) and is revoked', async () => {
    const auth = new AssistantAuth();
    const first = new Client({ name: 'assistant', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: auth });
    // Discovery (RFC 9728, RFC 8414), dynamic registration, then the browser step.
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(auth.client?.client_id, 'registered');
    assert.equal((auth.client as { client_secret?: string }).client_secret, undefined, 'a public client');
    const authorizationUrl = auth.authorizationUrl;
    assert.ok(authorizationUrl);
    assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    // Not signed in: the page asks to sign in first.
    const anonymous = await fetch(authorizationUrl);
    assert.match(await anonymous.text(), /action="\/oauth\/sign-in"/);

    // Signed in: the consent page, answered Allow; it names what the client may do.
    const consentPage = await (await fetch(authorizationUrl, { headers: { cookie: user.cookie } })).text();
    assert.match(consentPage, /Allow Test assistant to use your account/);
    assert.match(consentPage, /\(read\)/);
    assert.match(consentPage, /\(write\)/);
    const { code, back } = await flow.allow(authorizationUrl);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('state'), authorizationUrl.searchParams.get('state'));
    await transport.finishAuth(code);
    const tokens = auth.saved;
    assert.ok(tokens?.access_token && tokens.refresh_token);
    // The SDK asked for the scopes the resource metadata offers, and got them.
    assert.equal(authorizationUrl.searchParams.get('scope'), 'read write');
    assert.equal(tokens.scope, 'read write');

    // The code works once only.
    const replay = await flow.token({
      grant_type: 'authorization_code',
      code,
      code_verifier: auth.codeVerifier(),
      client_id: auth.client.client_id,
      redirect_uri: REDIRECT,
    });
    assert.equal(replay.status, 400);

    const client = new Client({ name: 'assistant', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: auth }));
    const list = await client.callTool({ name: 'list_chats', arguments: {} });
    assert.equal(list.isError, undefined, JSON.stringify(list.structuredContent));
    await client.close();

    // Stored hashed, listed beside the API keys.
    const { rows } = await gateway.deps.db.pool.query<{ accessTokenHash: string; refreshTokenHash: string }>(
      `SELECT "accessTokenHash", "refreshTokenHash" FROM "OAuthGrant" WHERE "userId" = $1`,
      [user.userId],
    );
    assert.deepEqual(rows, [
      { accessTokenHash: hashToken(tokens.access_token), refreshTokenHash: hashToken(tokens.refresh_token) },
    ]);
    const grants = (await (
      await fetch(`${base}/api/oauth-grants`, { headers: { cookie: user.cookie } })
    ).json()) as {
      data: { id: string; clientName: string }[];
    };
    assert.deepEqual(
      grants.data.map((g) => g.clientName),
      ['Test assistant'],
    );

    // Refresh rotates both tokens: the old refresh token and the old access token stop working.
    const refreshed = await flow.token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: auth.client.client_id,
    });
    assert.equal(refreshed.status, 200);
    const next = (await refreshed.json()) as OAuthTokens;
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    assert.equal((await initialize(tokens.access_token)).status, 401);
    assert.equal((await initialize(next.access_token)).status, 200);

    // Revoked by the user from the list: the next call is refused.
    const revoked = await fetch(`${base}/api/oauth-grants/${grants.data[0]!.id}`, {
      method: 'DELETE',
      headers: { cookie: user.cookie },
    });
    assert.equal(revoked.status, 204);
    const refused = await initialize(next.access_token);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  });

  it('revokes the whole grant when a spent refresh token is presented again', async () => {
    const { clientId, tokens } = await flow.grant();
    const refresh = (refreshToken: string | undefined) =>
      flow.token({ grant_type: 'refresh_token', refresh_token: refreshToken ?? '', client_id: clientId });
    const first = await refresh(tokens.refresh_token);
    assert.equal(first.status, 200);
    const next = (await first.json()) as OAuthTokens;
    assert.equal((await initialize(next.access_token)).status, 200);

    // The spent token again (a copy in other hands, or the client's own stale one): refused, and
    // every token of the grant stops working, the fresh pair included.
    const reused = await refresh(tokens.refresh_token);
    assert.equal(reused.status, 400);
    assert.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');
    assert.equal((await initialize(next.access_token)).status, 401);
    const afterwards = await refresh(next.refresh_token);
    assert.equal(afterwards.status, 400);
    assert.equal(((await afterwards.json()) as { error: string }).error, 'invalid_grant');
    const { rows } = await gateway.deps.db.pool.query<{ revoked: boolean }>(
      `SELECT "revokedAt" IS NOT NULL AS revoked FROM "OAuthGrant" WHERE "clientId" = $1`,
      [clientId],
    );
    assert.deepEqual(rows, [{ revoked: true }]);
  });

  it('checks scopes: a read-only token reads, and is told insufficient_scope when it writes', async () => {
    const { tokens } = await flow.grant('read');
    assert.equal(tokens.scope, 'read');
    const client = new Client({ name: 'reader', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
      }),
    );
    const list = await client.callTool({ name: 'list_chats', arguments: {} });
    assert.equal(list.isError, undefined, JSON.stringify(list.structuredContent));
    await assert.rejects(
      client.callTool({ name: 'send_message', arguments: { text: 'hi' } }),
      (err: { code?: number; message: string }) => err.code === 403 && /lacks the scope/.test(err.message),
    );
    await client.close();

    // RFC 6750 3.1 and the MCP authorization spec: 403, and what to ask the user for (the
    // token's scopes and the missing one), where to read how.
    for (const [method, params] of [
      ['tools/call', { name: 'send_message', arguments: { text: 'hi' } }],
      ['tools/call', { name: 'crop_image', arguments: {} }],
      ['tools/call', { name: 'cancel_run', arguments: {} }],
    ] as const) {
      const res = await post(tokens.access_token, method, params);
      assert.equal(res.status, 403, params.name);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="read write"/);
      assert.match(challenge, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/);
      assert.equal(((await res.json()) as { code: string }).code, 'FORBIDDEN');
    }
    assert.equal((await post(tokens.access_token, 'resources/list', {})).status, 200);

    // A write-only token may send, but not read.
    const { tokens: writer } = await flow.grant('write');
    const read = await post(writer.access_token, 'resources/read', { uri: 'chat://x' });
    assert.equal(read.status, 403);
    assert.match(read.headers.get('www-authenticate') ?? '', /scope="read write"/);
  });

  it('narrows a refreshed token to the scopes asked for, never past the grant, and refuses unknown scopes', async () => {
    const { clientId, tokens } = await flow.grant();
    const refresh = (refreshToken: string | undefined, scope: string) =>
      flow.token({
        grant_type: 'refresh_token',
        refresh_token: refreshToken ?? '',
        client_id: clientId,
        scope,
      });
    const narrowed = await refresh(tokens.refresh_token, 'read');
    assert.equal(narrowed.status, 200);
    const reader = (await narrowed.json()) as OAuthTokens;
    assert.equal(reader.scope, 'read');
    const send = await post(reader.access_token, 'tools/call', {
      name: 'send_message',
      arguments: { text: 'x' },
    });
    assert.equal(send.status, 403);
    // The grant still has what the user allowed: a later refresh may ask for it again.
    const widened = await refresh(reader.refresh_token, 'read write');
    assert.equal(widened.status, 200);
    const full = (await widened.json()) as OAuthTokens;
    assert.equal(full.scope, 'read write');
    const beyond = await refresh(full.refresh_token, 'read admin');
    assert.equal(beyond.status, 400);
    assert.equal(((await beyond.json()) as { error: string }).error, 'invalid_scope');

    const greedy = flow.authorizeUrl((await flow.register('Greedy')).client_id, {
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      scope: 'read admin',
    });
    const refused = await fetch(greedy, { headers: { cookie: user.cookie }, redirect: 'manual' });
    assert.equal(refused.status, 302);
    assert.equal(new URL(refused.headers.get('location') ?? '').searchParams.get('error'), 'invalid_scope');
  });

  it('publishes the metadata and refuses PKCE plain and a tampered consent', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const resourceMetadata = (await (await fetch(`${base}${path}`)).json()) as {
        resource: string;
        authorization_servers: string[];
        scopes_supported: string[];
      };
      assert.equal(resourceMetadata.resource, `${base}/mcp`);
      assert.deepEqual(resourceMetadata.authorization_servers, [`${base}/`]);
      assert.deepEqual(resourceMetadata.scopes_supported, ['read', 'write']);
    }
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
      code_challenge_methods_supported: string[];
      registration_endpoint: string;
      scopes_supported: string[];
    };
    assert.deepEqual(server.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(server.scopes_supported, ['read', 'write']);
    assert.ok(server.registration_endpoint);

    const registered = await flow.register('Plain');
    assert.equal(registered.client_secret, undefined);
    assert.equal(registered.token_endpoint_auth_method, 'none');

    const plain = flow.authorizeUrl(registered.client_id, {
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'plain',
    });
    const refused = await fetch(plain, { headers: { cookie: user.cookie }, redirect: 'manual' });
    assert.equal(refused.status, 302);
    assert.equal(new URL(refused.headers.get('location') ?? '').searchParams.get('error'), 'invalid_request');

    const tampered = await fetch(`${base}/oauth/consent`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: 'eyJjbGllbnRJZCI6ImV2aWwifQ.bad', decision: 'allow' }),
      redirect: 'manual',
    });
    assert.equal(tampered.status, 400);
  });

  it('lets a person allow an assistant in a real browser, back to its redirect (a name, or an IPv6 loopback CSP cannot name); the page cannot be framed', async () => {
    const browser = await launchBrowser();
    try {
      for (const [host, bind] of [
        ['localhost', 'localhost'],
        ['[::1]', '::1'],
      ] as const) {
        // The client's redirect, on another origin than the gateway, as an assistant's own listener is.
        const callbacks: string[] = [];
        const listener = createServer((req, res) => {
          callbacks.push(req.url ?? '');
          res.end('connected');
        });
        await new Promise<void>((resolve) => listener.listen(0, bind, resolve));
        const redirect = `http://${host}:${(listener.address() as AddressInfo).port}/callback`;
        try {
          const registered = await fetch(`${base}/register`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ client_name: 'Browser assistant', redirect_uris: [redirect] }),
          });
          const { client_id } = (await registered.json()) as { client_id: string };
          const url = new URL(`${base}/authorize`);
          for (const [name, value] of Object.entries({
            client_id,
            redirect_uri: redirect,
            response_type: 'code',
            code_challenge: createHash('sha256')
              .update('a-verifier-long-enough-for-pkce-0123456789')
              .digest('base64url'),
            code_challenge_method: 'S256',
            state: 'browser-state',
            scope: 'read write',
          }))
            url.searchParams.set(name, value);
          const consent = await fetch(url, { headers: { cookie: user.cookie } });
          assert.match(consent.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);

          const page = await browser.newPage();
          const [name, value] = user.cookie.split('=');
          await page.setCookie({ name: name ?? '', value: value ?? '', url: base });
          await page.goto(url.href, { waitUntil: 'networkidle0' });
          await Promise.all([page.waitForNavigation(), page.click('button[value=allow]')]);
          const back = new URL(page.url());
          assert.equal(`${back.origin}${back.pathname}`, redirect);
          assert.equal(back.searchParams.get('state'), 'browser-state');
          assert.match(back.searchParams.get('code') ?? '', /^svco_code_/);
          assert.ok(
            callbacks.some((c) => c.startsWith('/callback?')),
            `${host}: ${callbacks.join(' ')}`,
          );
          await page.close();
        } finally {
          listener.close();
        }
      }
    } finally {
      await browser.close();
    }
  });
});
