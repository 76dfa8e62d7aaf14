import assert from 'node:assert/strict';
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

const REDIRECT = 'http://127.0.0.1:9/callback';

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

  before(async () => {
    const stack = await testStack();
    // The issuer and resource the metadata names must be where the client connects.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gateway = await startGateway({ config: stack.config({ PUBLIC_BASE_URL: base }), port });
    user = await createTestUser();
  });
  after(async () => {
    await gateway?.close();
  });

  const initialize = (token: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
  const token = (body: Record<string, string>) =>
    fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
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

    // Signed in: the consent page, answered Allow.
    const consentPage = await (await fetch(authorizationUrl, { headers: { cookie: user.cookie } })).text();
    assert.match(consentPage, /Allow Test assistant to use your account/);
    const signed = /name="request" value="([^"]+)"/.exec(consentPage)?.[1];
    assert.ok(signed);
    const consent = await fetch(`${base}/oauth/consent`, {
      method: 'POST',
      headers: { cookie: user.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: signed, decision: 'allow' }),
      redirect: 'manual',
    });
    assert.equal(consent.status, 302);
    const back = new URL(consent.headers.get('location') ?? '');
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('state'), authorizationUrl.searchParams.get('state'));
    const code = back.searchParams.get('code');
    assert.ok(code);
    await transport.finishAuth(code);
    const tokens = auth.saved;
    assert.ok(tokens?.access_token && tokens.refresh_token);

    // The code works once only.
    const replay = await token({
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
    const refreshed = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: auth.client.client_id,
    });
    assert.equal(refreshed.status, 200);
    const next = (await refreshed.json()) as OAuthTokens;
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    const reused = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: auth.client.client_id,
    });
    assert.equal(reused.status, 400);
    assert.equal(((await reused.json()) as { error: string }).error, 'invalid_grant');
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

  it('publishes the metadata and refuses PKCE plain and a tampered consent', async () => {
    const resourceMetadata = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as {
      resource: string;
      authorization_servers: string[];
    };
    assert.equal(resourceMetadata.resource, `${base}/mcp`);
    assert.deepEqual(resourceMetadata.authorization_servers, [`${base}/`]);
    const server = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
      code_challenge_methods_supported: string[];
      registration_endpoint: string;
    };
    assert.deepEqual(server.code_challenge_methods_supported, ['S256']);
    assert.ok(server.registration_endpoint);

    const registered = (await (
      await fetch(`${base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Plain', redirect_uris: [REDIRECT] }),
      })
    ).json()) as { client_id: string; client_secret?: string; token_endpoint_auth_method: string };
    assert.equal(registered.client_secret, undefined);
    assert.equal(registered.token_endpoint_auth_method, 'none');

    const plain = new URL(`${base}/authorize`);
    for (const [name, value] of Object.entries({
      client_id: registered.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'plain',
    }))
      plain.searchParams.set(name, value);
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
});
