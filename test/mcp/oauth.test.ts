import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import axe from 'axe-core';
import type { Page } from 'puppeteer-core';
import { createHash, randomInt, randomUUID } from 'node:crypto';
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
import { startReconciler } from '../../operations/runs/reconciler';
import { OAUTH_REDIRECT, oauthFlow } from '../support/oauth';
import { waitFor } from '../support/wait';
import { DESKTOP, launchBrowser } from '../console/browser';

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
    // TRUST_PROXY: each registration of the flow comes from an address of its own (see register).
    gateway = await startGateway({
      config: stack.config({ PUBLIC_BASE_URL: base, TRUST_PROXY: 'loopback' }),
      port,
    });
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
    assert.match(consentPage, /<code>read<\/code>/);
    assert.match(consentPage, /<code>write<\/code>/);
    const { code, back } = await flow.allow(authorizationUrl);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('state'), authorizationUrl.searchParams.get('state'));
    await transport.finishAuth(code);
    const tokens = auth.saved;
    assert.ok(tokens?.access_token && tokens.refresh_token);
    // The SDK asked for the scopes the resource metadata offers, and got them.
    assert.equal(authorizationUrl.searchParams.get('scope'), 'read write');
    assert.equal(tokens.scope, 'read write');

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
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
    assert.match(await refused.text(), /does not offer \(admin\); it offers read and write/);
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
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
    assert.match(await refused.text(), /The app must use PKCE with S256/);

    const tampered = await fetch(`${base}/oauth/consent`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: 'eyJjbGllbnRJZCI6ImV2aWwifQ.bad', decision: 'allow' }),
      redirect: 'manual',
    });
    assert.equal(tampered.status, 400);
  });

  describe('the findings of 2026-12-07 (issues 45 and 46)', () => {
    const register = (body: unknown, address = `10.9.${randomInt(256)}.${randomInt(256)}`) =>
      fetch(`${base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify(body),
      });

    it('shows a refusal before consent on its own page, in one sentence, never redirecting to the client', async () => {
      const { client_id } = await flow.register('Open redirect');
      // Signed out, no PKCE: the request the review sent (RFC 9700 4.11.2).
      const url = new URL(`${base}/authorize`);
      url.searchParams.set('client_id', client_id);
      url.searchParams.set('response_type', 'code');
      for (const cookie of [undefined, user.cookie]) {
        const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
        assert.equal(res.status, 400);
        assert.equal(res.headers.get('location'), null);
        assert.match(res.headers.get('content-type') ?? '', /text\/html/);
        const page = await res.text();
        assert.match(
          page,
          /<p class="error" role="alert">The app sent no PKCE code challenge \(code_challenge\)\.<\/p>/,
        );
        assert.doesNotMatch(page, /127\.0\.0\.1:9/);
      }
      // An unknown client, a redirect it did not register: the same page.
      for (const [params, sentence] of [
        [{ client_id: 'nobody' }, /This app is not registered here/],
        [
          { client_id, redirect_uri: 'https://elsewhere.example/cb' },
          /The redirect URI is not one this app registered/,
        ],
      ] as const) {
        const res = await fetch(
          flow.authorizeUrl(params.client_id, {
            ...params,
            code_challenge: 'x'.repeat(43),
            code_challenge_method: 'S256',
          }),
          { redirect: 'manual' },
        );
        assert.equal(res.status, 400);
        assert.equal(res.headers.get('location'), null);
        assert.match(await res.text(), sentence);
      }
    });

    it('registers only https or loopback redirect URIs, and at most 4 KB of metadata', async () => {
      for (const uri of [
        'https://assistant.example/callback',
        'http://127.0.0.1:8123/callback',
        'http://[::1]/callback',
        'http://localhost:33418/',
      ]) {
        const res = await register({ client_name: 'Fine', redirect_uris: [uri] });
        assert.equal(res.status, 201, uri);
      }
      for (const uri of [
        'http://evil.example/callback',
        'http://192.168.1.10/callback',
        'javascript:alert(1)',
        'cursor://anysphere.cursor-retrieval/oauth/callback',
        'https://assistant.example/callback#fragment',
        'https://user:pass@assistant.example/callback',
      ]) {
        const res = await register({ client_name: 'Refused', redirect_uris: [uri] });
        assert.equal(res.status, 400, uri);
        assert.deepEqual(await res.json(), {
          error: 'invalid_redirect_uri',
          error_description:
            'Each redirect URI must be an https URL, or http on 127.0.0.1, [::1] or localhost, without a fragment.',
        });
      }
      const big = await register({
        client_name: 'Big',
        redirect_uris: [OAUTH_REDIRECT],
        contacts: ['x'.repeat(5000)],
      });
      assert.equal(big.status, 400);
      assert.deepEqual(await big.json(), {
        error: 'invalid_client_metadata',
        error_description: 'The client metadata may be at most 4096 bytes of JSON.',
      });
      // What PostgreSQL cannot store is refused, naming the member.
      const nul = await register({ client_name: 'a\u0000b', redirect_uris: [OAUTH_REDIRECT] });
      assert.equal(nul.status, 400);
      assert.deepEqual(await nul.json(), {
        error: 'invalid_client_metadata',
        error_description: 'client_name: may not contain NUL characters.',
      });
      // Members we do not use are not stored, whatever their size.
      const extra = await register({
        client_name: 'Extra',
        redirect_uris: [OAUTH_REDIRECT],
        jwks: { k: 'y'.repeat(20_000) },
      });
      assert.equal(extra.status, 201);
      const { client_id } = (await extra.json()) as { client_id: string };
      const { rows } = await gateway.deps.db.pool.query<{ size: number }>(
        `SELECT length(metadata::text) AS size FROM "OAuthClient" WHERE id = $1`,
        [client_id],
      );
      assert.ok(rows[0]!.size < 4096, `${rows[0]!.size} bytes stored`);
    });

    it('limits registrations per address over every gateway, an IPv6 address by its /64', async () => {
      const stack = await testStack();
      const config = stack.config({ TRUST_PROXY: 'loopback', OAUTH_REGISTRATIONS_PER_HOUR: '20' });
      const other = await startGateway({ config });
      try {
        const net = `2001:db8:${randomInt(0x10000).toString(16)}:${randomInt(0x10000).toString(16)}`;
        const via = (url: string, i: number) =>
          fetch(`${url}/register`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-forwarded-for': `${net}::${(i + 1).toString(16)}`,
            },
            body: JSON.stringify({ client_name: `Flood ${i}`, redirect_uris: [OAUTH_REDIRECT] }),
          });
        // Twenty, alternating between the two gateways, each from another address of the /64.
        for (let i = 0; i < 20; i++)
          assert.equal((await via(i % 2 === 0 ? base : other.url, i)).status, 201, `registration ${i}`);
        const refused = await via(other.url, 20);
        assert.equal(refused.status, 429);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        // Another network is not held back.
        const elsewhere = await register(
          { client_name: 'Elsewhere', redirect_uris: [OAUTH_REDIRECT] },
          `${net.replace(/:[^:]+$/, ':ffff')}::1`,
        );
        assert.equal(elsewhere.status, 201);
      } finally {
        await other.close();
      }
    });

    it('answers with iss (RFC 9207) and publishes metadata that says what the server does', async () => {
      const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(server.issuer, `${base}/`);
      assert.deepEqual(server.revocation_endpoint_auth_methods_supported, ['none']);
      assert.deepEqual(server.token_endpoint_auth_methods_supported, ['none']);
      assert.equal(server.authorization_response_iss_parameter_supported, true);

      const { client_id } = await flow.register('Issuer');
      const { back } = await flow.authorizedCode(client_id);
      assert.equal(back.searchParams.get('iss'), server.issuer);
      // A denial carries it too.
      const url = flow.authorizeUrl(client_id, {
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
        state: 's1',
      });
      const signed = /name="request" value="([^"]+)"/.exec(
        await (await fetch(url, { headers: { cookie: user.cookie } })).text(),
      )?.[1];
      const denied = await fetch(`${base}/oauth/consent`, {
        method: 'POST',
        headers: { cookie: user.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ request: signed ?? '', decision: 'deny' }),
        redirect: 'manual',
      });
      const location = new URL(denied.headers.get('location') ?? '');
      assert.equal(location.searchParams.get('error'), 'access_denied');
      assert.equal(location.searchParams.get('state'), 's1');
      assert.equal(location.searchParams.get('iss'), server.issuer);
    });

    it('revokes the grant of a code presented a second time', async () => {
      const { client_id } = await flow.register('Replayed code');
      const { code, verifier } = await flow.authorizedCode(client_id);
      const first = await flow.exchange(client_id, code, verifier);
      assert.equal(first.status, 200);
      const tokens = (await first.json()) as OAuthTokens;
      assert.equal((await initialize(tokens.access_token)).status, 200);
      const again = await flow.exchange(client_id, code, verifier);
      assert.equal((await initialize(tokens.access_token)).status, 401);
      assert.equal(again.status, 400);
      assert.deepEqual(await again.json(), {
        error: 'invalid_grant',
        error_description: 'The authorization code was already used; the access it gave is revoked.',
      });
      const refresh = await flow.token({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token ?? '',
        client_id,
      });
      assert.equal(refresh.status, 400);
    });

    it('takes only a PKCE verifier of 43 to 128 unreserved characters', async () => {
      const { client_id } = await flow.register('Verifiers');
      for (const verifier of ['a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(42)} `, `${'a'.repeat(42)}+`]) {
        const { code } = await flow.authorizedCode(client_id, { verifier });
        const res = await flow.exchange(client_id, code, verifier);
        assert.equal(res.status, 400, JSON.stringify(verifier));
        assert.deepEqual(await res.json(), {
          error: 'invalid_request',
          error_description:
            'code_verifier must be 43 to 128 characters of letters, digits, "-", ".", "_" and "~".',
        });
      }
      for (const verifier of ['a'.repeat(43), `${'A1-._~'.repeat(21)}xy`]) {
        const { code } = await flow.authorizedCode(client_id, { verifier });
        assert.equal((await flow.exchange(client_id, code, verifier)).status, 200, verifier);
      }
    });

    it('caps a user’s live grants: the consent page says so, and the token endpoint refuses past it', async () => {
      const stack = await testStack();
      const capped = await startGateway({
        config: stack.config({ TRUST_PROXY: 'loopback', MAX_OAUTH_GRANTS_PER_USER: '2' }),
      });
      try {
        const owner = await createTestUser();
        const capFlow = oauthFlow(capped.url, owner.cookie);
        await capFlow.grant(undefined, 'First');
        // Two consents while one place is left: both codes are issued, one exchange wins.
        const { client_id } = await capFlow.register('Racing');
        const a = await capFlow.authorizedCode(client_id);
        const b = await capFlow.authorizedCode(client_id);
        assert.equal((await capFlow.exchange(client_id, a.code, a.verifier)).status, 200);
        const refused = await capFlow.exchange(client_id, b.code, b.verifier);
        assert.equal(refused.status, 400);
        assert.deepEqual(await refused.json(), {
          error: 'invalid_grant',
          error_description:
            'The account already has 2 assistants connected, the most allowed; its owner must disconnect one first.',
        });
        const full = await fetch(
          capFlow.authorizeUrl(client_id, { code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }),
          { headers: { cookie: owner.cookie }, redirect: 'manual' },
        );
        assert.equal(full.status, 422);
        assert.match(
          await full.text(),
          /You already have 2 assistants connected by sign-in, the most allowed/,
        );
        // A revoked grant frees its place.
        const list = (await (
          await fetch(`${capped.url}/api/oauth-grants`, { headers: { cookie: owner.cookie } })
        ).json()) as { data: { id: string }[] };
        await fetch(`${capped.url}/api/oauth-grants/${list.data[0]!.id}`, {
          method: 'DELETE',
          headers: { cookie: owner.cookie },
        });
        await capFlow.grant(undefined, 'Third');
      } finally {
        await capped.close();
      }
    });

    it('pages GET /api/oauth-grants with limit and cursor, newest first', async () => {
      const owner = await createTestUser();
      const ownerFlow = oauthFlow(base, owner.cookie);
      for (const name of ['One', 'Two', 'Three']) await ownerFlow.grant(undefined, name);
      const list = async (query: string) => {
        const res = await fetch(`${base}/api/oauth-grants?${query}`, { headers: { cookie: owner.cookie } });
        assert.equal(res.status, 200);
        return (await res.json()) as { data: { clientName: string }[]; nextCursor: string | null };
      };
      const first = await list('limit=2');
      assert.deepEqual(
        first.data.map((g) => g.clientName),
        ['Three', 'Two'],
      );
      assert.ok(first.nextCursor);
      const second = await list(`limit=2&cursor=${first.nextCursor}`);
      assert.deepEqual(
        second.data.map((g) => g.clientName),
        ['One'],
      );
      assert.equal(second.nextCursor, null);
      const bad = await fetch(`${base}/api/oauth-grants?limit=101`, { headers: { cookie: owner.cookie } });
      assert.equal(bad.status, 400);
    });

    it('sweeps expired codes, and clients unused with no live grant with their ended grants', async () => {
      const pool = gateway.deps.db.pool;
      const owner = await createTestUser();
      const ownerFlow = oauthFlow(base, owner.cookie);
      // A client with a live grant, and one whose grant was revoked two days ago; both idle long.
      const live = await ownerFlow.grant(undefined, 'Still connected');
      const dead = await ownerFlow.grant(undefined, 'Disconnected');
      await pool.query(
        `UPDATE "OAuthGrant" SET "revokedAt" = now() - interval '2 days' WHERE "clientId" = $1`,
        [dead.clientId],
      );
      const idle = (await ownerFlow.register('Never used')).client_id;
      const fresh = (await ownerFlow.register('Just registered')).client_id;
      await pool.query(
        `UPDATE "OAuthClient" SET "lastUsedAt" = now() - interval '31 days' WHERE id = ANY($1)`,
        [[live.clientId, dead.clientId, idle]],
      );
      // A code never exchanged, past its five minutes.
      const { client_id: coded } = await ownerFlow.register('Coded');
      await ownerFlow.authorizedCode(coded);
      await pool.query(
        `UPDATE "OAuthCode" SET "expiresAt" = now() - interval '1 second' WHERE "clientId" = $1`,
        [coded],
      );

      const reconciler = startReconciler(gateway.deps, 3_600_000);
      try {
        // null while another pass holds the lock.
        const pass = await waitFor(() => reconciler.pass().then((p) => p ?? undefined), { what: 'a pass' });
        assert.ok(pass.retention.oauthCodes >= 1 && pass.retention.oauthClients >= 2);
      } finally {
        await reconciler.stop();
      }
      const { rows: clients } = await pool.query<{ id: string }>(
        `SELECT id FROM "OAuthClient" WHERE id = ANY($1)`,
        [[live.clientId, dead.clientId, idle, fresh, coded]],
      );
      assert.deepEqual(new Set(clients.map((c) => c.id)), new Set([live.clientId, fresh, coded]));
      const { rows: codes } = await pool.query(`SELECT 1 FROM "OAuthCode" WHERE "clientId" = $1`, [coded]);
      assert.equal(codes.length, 0);
      assert.equal((await initialize(live.tokens.access_token)).status, 200);
    });

    it('sign out everywhere revokes every OAuth grant and the API keys other sessions created', async () => {
      const email = `everywhere-${randomUUID()}@example.test`;
      const password = 'a long enough password';
      const json = (body: unknown, headers: Record<string, string> = {}) => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base, ...headers },
        body: JSON.stringify(body),
      });
      assert.equal((await fetch(`${base}/api/auth/sign-up`, json({ email, password }))).status, 201);
      const session = async () => {
        const res = await fetch(`${base}/api/auth/sign-in`, json({ email, password }));
        return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
      };
      const owner = await session();
      const thief = await session();
      const key = async (cookie: string) =>
        ((await (await fetch(`${base}/api/keys`, json({ name: 'k' }, { cookie }))).json()) as { key: string })
          .key;
      const ownersKey = await key(owner);
      const thiefsKey = await key(thief);
      const { tokens } = await oauthFlow(base, thief).grant(undefined, 'Planted');
      assert.equal((await initialize(tokens.access_token)).status, 200);

      const res = await fetch(`${base}/api/auth/sign-out-everywhere`, {
        method: 'POST',
        headers: { cookie: owner, origin: base },
      });
      assert.equal(res.status, 204);
      const chats = (apiKey: string) =>
        fetch(`${base}/api/v1/chats`, { headers: { authorization: `Bearer ${apiKey}` } });
      assert.equal((await chats(thiefsKey)).status, 401);
      assert.equal((await chats(ownersKey)).status, 200);
      assert.equal((await initialize(tokens.access_token)).status, 401);
      for (const cookie of [owner, thief])
        assert.equal((await fetch(`${base}/api/auth/session`, { headers: { cookie } })).status, 401);
    });
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
          const { client_id } = await flow.register('Browser assistant', [redirect]);
          const url = flow.authorizeUrl(client_id, {
            redirect_uri: redirect,
            code_challenge: createHash('sha256')
              .update('a-verifier-long-enough-for-pkce-0123456789')
              .digest('base64url'),
            code_challenge_method: 'S256',
            state: 'browser-state',
            scope: 'read write',
          });
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
  describe('the pages in Chromium at 360 and 1280 px', () => {
    /** Where the screenshots go; docs/images holds a copy of them. */
    const SHOTS =
      process.env.OAUTH_SCREENSHOTS_DIR ?? path.resolve(__dirname, '../../.scratch/oauth-screenshots');
    const WIDTHS = [
      // A phone as a phone browser lays a page out: without a viewport tag, 980 px shrunk to fit.
      { label: '360', viewport: { width: 360, height: 740, isMobile: true, hasTouch: true } },
      { label: '1280', viewport: DESKTOP },
    ];

    /** The page is laid out for the window (no sideways scrolling), axe finds nothing serious; a screenshot. */
    async function lookAt(page: Page, name: string, width: { label: string; viewport: { width: number } }) {
      const layout = (await page.evaluate(`({
        viewportTag: document.querySelector('meta[name=viewport]') !== null,
        inner: window.innerWidth,
        scroll: document.documentElement.scrollWidth,
      })`)) as { viewportTag: boolean; inner: number; scroll: number };
      assert.ok(layout.viewportTag, `${name}: no viewport meta tag`);
      assert.equal(layout.inner, width.viewport.width, `${name}: laid out ${layout.inner} px wide`);
      assert.ok(
        layout.scroll <= layout.inner,
        `${name}: ${layout.scroll} px wide in a ${layout.inner} px window`,
      );
      await page.evaluate(axe.source);
      const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
        r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id))`)) as string[];
      assert.deepEqual(violations, [], `axe on ${name}`);
      await page.screenshot({ path: path.join(SHOTS, `oauth-${name}-${width.label}.png`), fullPage: true });
    }

    it('signs in, again after a wrong password, shows the app as unverified, consents and explains a refusal', async () => {
      await mkdir(SHOTS, { recursive: true });
      const email = `pages-${randomUUID()}@example.test`;
      const password = 'a long enough password';
      const signUp = await fetch(`${base}/api/auth/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email, password }),
      });
      assert.equal(signUp.status, 201);
      const callbacks: string[] = [];
      const listener = createServer((req, res) => {
        callbacks.push(req.url ?? '');
        res.end('connected');
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const redirect = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
      const { client_id } = await flow.register('Claude (or so it says)', [redirect]);
      const url = flow.authorizeUrl(client_id, {
        redirect_uri: redirect,
        code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
        code_challenge_method: 'S256',
        state: 'pages',
      });

      const browser = await launchBrowser();
      try {
        for (const width of WIDTHS) {
          const context = await browser.createBrowserContext();
          const page = await context.newPage();
          await page.setViewport(width.viewport);
          const text = async () => String(await page.evaluate('document.body.innerText'));
          const submit = async () =>
            (await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]))[0];

          await page.goto(url.href, { waitUntil: 'load' });
          await lookAt(page, 'signin', width);
          assert.match(await text(), /Sign in to connect an app/);
          assert.match(await text(), /Claude \(or so it says\)\s*Unverified/);

          await page.type('input[name=email]', email);
          await page.type('input[name=password]', 'not the password at all');
          const wrong = await submit();
          assert.equal(wrong?.status(), 401);
          assert.match(await text(), /The email or password is wrong\./);
          assert.equal(
            await page.$eval('input[name=email]', (el) => (el as unknown as { value: string }).value),
            email,
          );
          await lookAt(page, 'signin-wrong-password', width);

          await page.type('input[name=password]', password);
          await submit();
          assert.match(await text(), /Allow Claude \(or so it says\) to use your account\?/);
          assert.match(await text(), /Unverified/);
          assert.match(
            await text(),
            new RegExp(`Its answer goes to ${redirect.replace(/\/callback$/, '').replace(/\./g, '\\.')}`),
          );
          await lookAt(page, 'consent', width);
          await Promise.all([page.waitForNavigation(), page.click('button[value=allow]')]);
          const back = new URL(page.url());
          assert.equal(`${back.origin}${back.pathname}`, redirect);
          assert.equal(back.searchParams.get('iss'), `${base}/`);
          assert.equal(back.searchParams.get('state'), 'pages');

          const refusal = new URL(`${base}/authorize`);
          refusal.searchParams.set('client_id', client_id);
          refusal.searchParams.set('response_type', 'code');
          const refused = await page.goto(refusal.href, { waitUntil: 'load' });
          assert.equal(refused?.status(), 400);
          assert.match(await text(), /This app cannot be connected\s*The app sent no PKCE code challenge/);
          await lookAt(page, 'error', width);
          await context.close();
        }
        assert.equal(callbacks.filter((c) => c.startsWith('/callback?code=')).length, WIDTHS.length);
      } finally {
        await browser.close();
        listener.close();
      }
    });
  });
});
