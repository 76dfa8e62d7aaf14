import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  hashToken,
  newOAuthToken,
  OAUTH_ACCESS_PREFIX,
  OAUTH_CODE_PREFIX,
  OAUTH_REFRESH_PREFIX,
} from '../core/auth/tokens';
import { isOAuthScope, OAUTH_SCOPES, type OAuthScope } from '../core/auth/scopes';
import { publicBaseUrl } from '../core/config/config';
import { AppError, NotFoundError, UnauthorizedError } from '../core/errors/app-error';
import { addressBucket } from '../core/net/address-bucket';
import {
  checkAccessToken,
  exchangeCode,
  insertClient,
  insertCode,
  liveGrantCount,
  revokeGrant,
  rotateGrant,
  selectClient,
  selectCode,
  selectGrants,
} from '../core/oauth/store';
import { page } from '../core/schemas/common';
import type { OAuthGrantDto } from '../core/schemas/identity';
import {
  isAllowedRedirectUri,
  type AuthorizationQuery,
  type ClientRegistration,
  type TokenRequest,
} from '../core/schemas/oauth';
import type { Page } from './chats';
import type { Caller, OperationDeps } from './deps';
import type { RateLimitState } from './key-memory';
import { consumeOrThrow, countCalls, limitReached, postgresLimiter, type UserLimit } from './limits';

const CODE_TTL_SECONDS = 300;
/** How long a consent page may be answered after it was shown. */
const CONSENT_TTL_MS = 10 * 60_000;
const REGISTRATION_WINDOW_SECONDS = 3600;
const UNKNOWN_CLIENT = 'This app is not registered here, or its registration has expired.';
const BAD_CODE = 'The authorization code is invalid or expired.';

/** What the consent page carries back, signed, so the answer cannot name another client or URI. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  /** What the user is asked to allow, and allows. */
  scopes: OAuthScope[];
  state?: string;
  resource?: string;
}

/**
 * The app a person is asked about: the name it registered, which nobody has checked (any client
 * may register under any name), and the origin (or app scheme) its answer goes to.
 */
export interface ClientShown {
  clientId: string;
  name: string | null;
  redirectTo: string;
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  /** RFC 6749 5.1: the access token's scopes, space-separated. */
  scope: string;
}

/** Why a token or revocation request was refused: RFC 6749 5.2's answer, as the client reads it. */
export interface TokenRefusal {
  error: 'invalid_client' | 'invalid_grant' | 'invalid_scope';
  error_description: string;
}

const refusal = (error: TokenRefusal['error'], description: string): TokenRefusal => ({
  error,
  error_description: description,
});

/**
 * 403 for a caller whose OAuth token lacks a scope the request needs (RFC 6750 3.1
 * `insufficient_scope`). `scopes` is what to ask the user for: the token's own scopes and the
 * missing ones, so that a client authorizing again does not lose what it had (the MCP
 * authorization spec's advice).
 */
export class InsufficientScopeError extends AppError {
  constructor(
    missing: readonly OAuthScope[],
    readonly scopes: readonly OAuthScope[],
  ) {
    super('FORBIDDEN', `This access token lacks the scope this request needs: ${missing.join(' ')}.`);
  }
}

/** Throws InsufficientScopeError unless the caller has every one of `needed` (unscoped callers do). */
export function requireScopes(caller: Caller, needed: Iterable<OAuthScope>): void {
  if (!caller.scopes) return;
  const held = caller.scopes;
  const missing = [...new Set(needed)].filter((scope) => !held.includes(scope));
  if (missing.length > 0)
    throw new InsufficientScopeError(
      missing,
      OAUTH_SCOPES.filter((scope) => held.includes(scope) || missing.includes(scope)),
    );
}

/**
 * The scopes an authorization request asks for: every scope when it names none (the default RFC
 * 6749 3.3 lets the server choose); 400 naming the ones we do not have.
 */
function requestedScopes(scope: string | undefined): OAuthScope[] {
  const named = (scope ?? '').split(' ').filter(Boolean);
  if (named.length === 0) return [...OAUTH_SCOPES];
  const unknown = named.filter((s) => !isOAuthScope(s));
  if (unknown.length > 0)
    throw new AppError(
      'INVALID_REQUEST',
      `The app asks for access this service does not offer (${unknown.join(' ')}); it offers ${OAUTH_SCOPES.join(' and ')}.`,
    );
  return [...new Set(named as OAuthScope[])];
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Whether `requested` is the registered redirect URI: the same string, or for a loopback one the
 * same but for the port, which a native app takes from the system at each start (RFC 8252 7.3).
 */
function redirectMatches(requested: string, registered: string): boolean {
  if (requested === registered) return true;
  if (!URL.canParse(requested) || !URL.canParse(registered)) return false;
  const a = new URL(requested);
  const b = new URL(registered);
  return (
    LOOPBACK_HOSTS.has(a.hostname) &&
    a.protocol === b.protocol &&
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    a.search === b.search
  );
}

/** Where an answer goes, as a person can judge it: the origin, or the scheme of an app's own URI. */
function redirectTarget(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin === 'null' ? url.protocol : url.origin;
}

/**
 * OAuth 2.1 for MCP clients that connect by sign-in: dynamic registration (public clients only,
 * PKCE S256), codes issued on the signed-in user's consent, and grants whose access and refresh
 * tokens are stored as hashes and rotate on each refresh. The HTTP side is apps/mcp/oauth.ts.
 */
export function createOAuthOperations(deps: OperationDeps) {
  const { config, db } = deps;
  const accessTtlSeconds = Math.floor(config.OAUTH_ACCESS_TOKEN_TTL / 1000);
  const refreshTtlSeconds = Math.floor(config.OAUTH_REFRESH_TOKEN_TTL / 1000);
  /** RFC 9207: the `iss` of every authorization response, the metadata's `issuer`. */
  const issuer = new URL(publicBaseUrl(config)).href;
  // A key of its own derived from APP_SECRET: a consent signature is no other HMAC's.
  const consentKey = createHmac('sha256', config.APP_SECRET).update('oauth/consent/v1').digest();
  const registrations = postgresLimiter(db, {
    keyPrefix: 'oauth-register',
    points: config.OAUTH_REGISTRATIONS_PER_HOUR,
    durationSeconds: REGISTRATION_WINDOW_SECONDS,
  });

  const tokens = (access: string, refresh: string, scopes: readonly string[]): IssuedTokens => ({
    access_token: access,
    token_type: 'Bearer',
    expires_in: accessTtlSeconds,
    refresh_token: refresh,
    scope: scopes.join(' '),
  });

  /** The client's registered metadata; undefined for an unknown (or swept) client. */
  const clientOf = async (clientId: string) =>
    (await selectClient(db.pool, clientId)) as { client_name?: string; redirect_uris?: string[] } | undefined;

  /** 422 when the user already holds as many live grants as allowed. */
  const assertGrantRoom = async (userId: string) => {
    if ((await liveGrantCount(db.pool, userId)) >= config.MAX_OAUTH_GRANTS_PER_USER)
      throw limitReached(
        'MAX_OAUTH_GRANTS_PER_USER',
        config.MAX_OAUTH_GRANTS_PER_USER,
        'assistants connected by sign-in',
      );
  };

  /** The request, signed for this user, to come back with the consent form. */
  const signConsent = (userId: string, request: AuthorizationRequest): string => {
    const payload = Buffer.from(
      JSON.stringify({ ...request, userId, exp: Date.now() + CONSENT_TTL_MS }),
    ).toString('base64url');
    return `${payload}.${createHmac('sha256', consentKey).update(payload).digest('base64url')}`;
  };

  /** The signed request, if it is this user's, unaltered and recent; else undefined. */
  const verifyConsent = (userId: string, signed: string): AuthorizationRequest | undefined => {
    const [payload, sig] = signed.split('.');
    if (!payload || !sig) return undefined;
    const expected = createHmac('sha256', consentKey).update(payload).digest();
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const request = JSON.parse(Buffer.from(payload, 'base64url').toString()) as AuthorizationRequest & {
      userId: string;
      exp: number;
    };
    if (request.userId !== userId || request.exp < Date.now()) return undefined;
    const { userId: _user, exp: _exp, ...rest } = request;
    return rest;
  };

  /** The client's redirect URI with the answer's parameters, `iss` among them (RFC 9207). */
  const answer = (request: AuthorizationRequest, params: Record<string, string>): string => {
    const url = new URL(request.redirectUri);
    for (const [name, value] of Object.entries({ ...params, state: request.state, iss: issuer }))
      if (value !== undefined) url.searchParams.set(name, value);
    return url.href;
  };

  const operations = {
    /**
     * A public client (no secret: whatever the metadata asks, it is registered with
     * `token_endpoint_auth_method: none`), counted against the registrations of its address's
     * bucket (429 past OAUTH_REGISTRATIONS_PER_HOUR, over every gateway).
     */
    async registerClient(
      metadata: ClientRegistration,
      clientAddress: string,
    ): Promise<Record<string, unknown>> {
      await consumeOrThrow(
        registrations,
        addressBucket(clientAddress),
        'Too many app registrations from this network; retry later.',
      );
      const client = {
        ...metadata,
        token_endpoint_auth_method: 'none',
        client_id: randomUUID(),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      };
      await insertClient(db.pool, client.client_id, client);
      return client;
    },

    /**
     * An authorization request checked against its client's registration: 400 with one sentence
     * for a person when it cannot go on. Nothing here redirects: until the person has signed in
     * and answered, no answer goes to an address anyone could have registered (RFC 9700 4.11.2).
     */
    async authorization(
      query: AuthorizationQuery,
    ): Promise<{ request: AuthorizationRequest; client: ClientShown }> {
      const client = await clientOf(query.client_id);
      if (!client) throw new AppError('INVALID_REQUEST', `${UNKNOWN_CLIENT} Start again from the app.`);
      const registered = client.redirect_uris ?? [];
      const redirectUri =
        query.redirect_uri === undefined
          ? registered.length === 1
            ? registered[0]
            : undefined
          : registered.some((r) => redirectMatches(query.redirect_uri as string, r))
            ? query.redirect_uri
            : undefined;
      if (redirectUri === undefined)
        throw new AppError(
          'INVALID_REQUEST',
          query.redirect_uri === undefined
            ? 'The request does not say which of the app’s redirect URIs to answer at.'
            : 'The redirect URI is not one this app registered.',
        );
      // A client registered before the rule held may name one it no longer allows.
      if (!isAllowedRedirectUri(redirectUri))
        throw new AppError('INVALID_REQUEST', 'The app’s redirect URI is neither https nor this machine.');
      const request: AuthorizationRequest = {
        clientId: query.client_id,
        redirectUri,
        codeChallenge: query.code_challenge,
        scopes: requestedScopes(query.scope),
        ...(query.state !== undefined ? { state: query.state } : {}),
        ...(query.resource !== undefined ? { resource: query.resource } : {}),
      };
      return {
        request,
        client: {
          clientId: query.client_id,
          name: client.client_name ?? null,
          redirectTo: redirectTarget(redirectUri),
        },
      };
    },

    /** The consent page's contents for the signed-in caller; 422 when they have no room for one more grant. */
    async consent(caller: Caller, query: AuthorizationQuery) {
      const { request, client } = await operations.authorization(query);
      await assertGrantRoom(caller.userId);
      return { client, scopes: request.scopes, signed: signConsent(caller.userId, request) };
    },

    /**
     * The person's answer to the consent page: where to send them, the code (or `access_denied`)
     * on the client's redirect URI. 400 for a request that is not theirs, altered or stale.
     */
    async decide(caller: Caller, signed: string, allow: boolean): Promise<{ location: string }> {
      const request = verifyConsent(caller.userId, signed);
      if (!request)
        throw new AppError(
          'INVALID_REQUEST',
          'This authorization is invalid or has expired; start again from the app.',
        );
      if (!allow) return { location: answer(request, { error: 'access_denied' }) };
      await assertGrantRoom(caller.userId);
      const code = newOAuthToken(OAUTH_CODE_PREFIX);
      await insertCode(db.pool, {
        codeHash: hashToken(code),
        clientId: request.clientId,
        userId: caller.userId,
        codeChallenge: request.codeChallenge,
        redirectUri: request.redirectUri,
        resource: request.resource ?? null,
        scopes: request.scopes,
        ttlSeconds: CODE_TTL_SECONDS,
      });
      return { location: answer(request, { code }) };
    },

    /**
     * The code's grant. A code presented a second time (a copy in other hands, or a client's
     * retry) is refused and revokes the grant it gave, every token of it (RFC 6749 4.1.2), before
     * its verifier is even looked at.
     */
    async exchangeCode(
      input: Extract<TokenRequest, { grant_type: 'authorization_code' }>,
    ): Promise<IssuedTokens | TokenRefusal> {
      if (!(await clientOf(input.client_id))) return refusal('invalid_client', UNKNOWN_CLIENT);
      const codeHash = hashToken(input.code);
      const code = await selectCode(db.pool, codeHash, input.client_id);
      if (code?.grantId) {
        await revokeGrant(db.pool, { userId: code.userId, id: code.grantId });
        deps.logger.warn(
          { clientId: input.client_id, grantId: code.grantId },
          'a spent OAuth authorization code was presented again; its grant is revoked',
        );
        return refusal(
          'invalid_grant',
          'The authorization code was already used; the access it gave is revoked.',
        );
      }
      if (!code || code.expired) return refusal('invalid_grant', BAD_CODE);
      if (createHash('sha256').update(input.code_verifier).digest('base64url') !== code.codeChallenge)
        return refusal('invalid_grant', 'The code_verifier does not match the code challenge.');
      if (input.redirect_uri !== undefined && input.redirect_uri !== code.redirectUri)
        return refusal('invalid_grant', 'The redirect_uri is not the authorization request’s.');
      if (input.resource !== undefined && code.resource !== null && input.resource !== code.resource)
        return refusal('invalid_grant', 'The code was issued for another resource.');
      const access = newOAuthToken(OAUTH_ACCESS_PREFIX);
      const refresh = newOAuthToken(OAUTH_REFRESH_PREFIX);
      const outcome = await exchangeCode(db.pool, {
        codeHash,
        clientId: input.client_id,
        userId: code.userId,
        grantId: randomUUID(),
        accessTokenHash: hashToken(access),
        accessTtlSeconds,
        refreshTokenHash: hashToken(refresh),
        refreshTtlSeconds,
        maxGrants: config.MAX_OAUTH_GRANTS_PER_USER,
      });
      if (outcome === 'full')
        return refusal(
          'invalid_grant',
          `The account already has ${config.MAX_OAUTH_GRANTS_PER_USER} assistants connected, the most allowed; its owner must disconnect one first.`,
        );
      // Exchanged by a racing request meanwhile: that one was the first use, this the second.
      if (outcome === 'spent') return operations.exchangeCode(input);
      return tokens(access, refresh, code.scopes);
    },

    /**
     * New access and refresh tokens; the refresh token presented stops working, and presenting it
     * again revokes the whole grant (see rotateGrant). `scope` narrows the new access token to
     * some of the granted scopes (RFC 6749 6); none keeps them all.
     */
    async refresh(
      input: Extract<TokenRequest, { grant_type: 'refresh_token' }>,
    ): Promise<IssuedTokens | TokenRefusal> {
      if (!(await clientOf(input.client_id))) return refusal('invalid_client', UNKNOWN_CLIENT);
      const asked = input.scope?.split(' ').filter(Boolean);
      const access = newOAuthToken(OAUTH_ACCESS_PREFIX);
      const refresh = newOAuthToken(OAUTH_REFRESH_PREFIX);
      const rotation = await rotateGrant(db.pool, {
        refreshTokenHash: hashToken(input.refresh_token),
        clientId: input.client_id,
        accessTokenHash: hashToken(access),
        accessTtlSeconds,
        newRefreshTokenHash: hashToken(refresh),
        refreshTtlSeconds,
        scopes: asked?.length ? [...new Set(asked)] : null,
      });
      if (rotation.outcome === 'rotated') return tokens(access, refresh, rotation.accessScopes);
      if (rotation.outcome === 'reused')
        deps.logger.warn(
          { clientId: input.client_id },
          'a spent OAuth refresh token was presented again; its grant is revoked',
        );
      return rotation.outcome === 'scope-too-wide'
        ? refusal('invalid_scope', 'A refresh may only ask for scopes the grant has.')
        : refusal('invalid_grant', 'The refresh token is invalid, spent, expired or revoked.');
    },

    /**
     * The caller of an access token, after counting the call against each of its user's `limits`
     * (the counters their API keys and console count against too): 401 for a bad token, 429 past a
     * limit.
     */
    async authenticateAccessToken(
      token: string | undefined,
      limits: readonly UserLimit[],
      via: Caller['via'],
    ): Promise<{ caller: Caller; rateLimit?: RateLimitState; expiresAt: Date }> {
      const grant = token?.startsWith(OAUTH_ACCESS_PREFIX)
        ? await checkAccessToken(db.pool, hashToken(token))
        : undefined;
      if (!grant) throw new UnauthorizedError('The access token is invalid, expired or revoked.');
      const rateLimit = await countCalls(db, grant.userId, limits);
      return {
        ...(rateLimit ? { rateLimit } : {}),
        caller: {
          userId: grant.userId,
          oauthGrantId: grant.id,
          scopes: grant.accessScopes.filter(isOAuthScope),
          via,
        },
        expiresAt: grant.accessExpiresAt,
      };
    },

    /**
     * RFC 7009: a client revokes its own token (access or refresh); the whole grant ends. An
     * unknown token is no error (the client's goal is met).
     */
    async revokeToken(clientId: string, token: string): Promise<TokenRefusal | undefined> {
      if (!(await clientOf(clientId))) return refusal('invalid_client', UNKNOWN_CLIENT);
      await revokeGrant(db.pool, { clientId, tokenHash: hashToken(token) });
      return undefined;
    },

    /** A page of the caller's live grants, beside their API keys, newest first. */
    async listGrants(
      caller: Caller,
      query: { limit: number; cursor?: string },
    ): Promise<Page<OAuthGrantDto>> {
      const rows = await selectGrants(db.pool, caller.userId, query);
      const { data, nextCursor } = page(rows, query.limit, (row) => ({ at: row.createdAt, id: row.id }));
      return {
        data: data.map((r) => ({
          id: r.id,
          clientId: r.clientId,
          clientName: r.clientName,
          lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
          createdAt: r.createdAt.toISOString(),
        })),
        nextCursor,
      };
    },

    async revokeGrant(caller: Caller, grantId: string): Promise<void> {
      if (!(await revokeGrant(db.pool, { userId: caller.userId, id: grantId })))
        throw new NotFoundError('NOT_FOUND', 'No such authorization.');
    },
  };
  return operations;
}

export type OAuthOperations = ReturnType<typeof createOAuthOperations>;
