/**
 * An OAuth client's side of the flow by raw HTTP, as an assistant runs it against a gateway at
 * `base` for the user whose session `cookie` consents: dynamic registration, the authorization
 * page with PKCE, consent, and the token endpoint.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export const OAUTH_REDIRECT = 'http://127.0.0.1:9/callback';

export function oauthFlow(base: string, cookie: string) {
  const token = (body: Record<string, string>) =>
    fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });

  /** The signed-in user allows the authorization page at `url`; the code it redirects with. */
  async function allow(url: URL): Promise<{ code: string; back: URL }> {
    const consentPage = await (await fetch(url, { headers: { cookie } })).text();
    const signed = /name="request" value="([^"]+)"/.exec(consentPage)?.[1];
    assert.ok(signed, consentPage);
    const consent = await fetch(`${base}/oauth/consent`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request: signed, decision: 'allow' }),
      redirect: 'manual',
    });
    assert.equal(consent.status, 302);
    const back = new URL(consent.headers.get('location') ?? '');
    const code = back.searchParams.get('code');
    assert.ok(code, back.href);
    return { code, back };
  }

  /**
   * Dynamic client registration, as an assistant does it. Each from an address of its own (to a
   * gateway that believes its proxy, TRUST_PROXY=loopback), so that a suite's registrations do not
   * count against one another's limit.
   */
  async function register(
    clientName: string,
    redirectUris = [OAUTH_REDIRECT],
  ): Promise<{ client_id: string; client_secret?: string; token_endpoint_auth_method: string }> {
    const res = await fetch(`${base}/register`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}`,
      },
      body: JSON.stringify({ client_name: clientName, redirect_uris: redirectUris }),
    });
    assert.equal(res.status, 201);
    return (await res.json()) as {
      client_id: string;
      client_secret?: string;
      token_endpoint_auth_method: string;
    };
  }

  /** The authorization page's URL for `clientId`, with these parameters besides. */
  function authorizeUrl(clientId: string, params: Record<string, string>): URL {
    const url = new URL(`${base}/authorize`);
    for (const [name, value] of Object.entries({
      client_id: clientId,
      redirect_uri: OAUTH_REDIRECT,
      response_type: 'code',
      ...params,
    }))
      url.searchParams.set(name, value);
    return url;
  }

  /**
   * A code for `clientId`, allowed by the user, and the PKCE verifier it was asked with (by default
   * 32 random bytes, as the SDK's clients make one).
   */
  async function authorizedCode(
    clientId: string,
    options: { scope?: string; verifier?: string } = {},
  ): Promise<{ code: string; verifier: string; back: URL }> {
    const verifier = options.verifier ?? randomBytes(32).toString('base64url');
    const url = authorizeUrl(clientId, {
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...(options.scope === undefined ? {} : { scope: options.scope }),
    });
    return { ...(await allow(url)), verifier };
  }

  /** The token endpoint's answer to the code and its verifier. */
  const exchange = (clientId: string, code: string, verifier: string) =>
    token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: OAUTH_REDIRECT,
    });

  /** A grant (registration, PKCE, consent, code exchange) for a client so named, asking for `scope`. */
  async function grant(
    scope?: string,
    clientName = 'Raw client',
  ): Promise<{ clientId: string; tokens: OAuthTokens & { scope: string } }> {
    const clientId = (await register(clientName)).client_id;
    const { code, verifier } = await authorizedCode(clientId, scope === undefined ? {} : { scope });
    const res = await exchange(clientId, code, verifier);
    assert.equal(res.status, 200);
    return { clientId, tokens: (await res.json()) as OAuthTokens & { scope: string } };
  }

  return { token, allow, register, authorizeUrl, authorizedCode, exchange, grant };
}
