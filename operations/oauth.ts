import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  hashToken,
  newOAuthToken,
  OAUTH_ACCESS_PREFIX,
  OAUTH_CODE_PREFIX,
  OAUTH_REFRESH_PREFIX,
} from '../core/auth/tokens';
import { isOAuthScope, OAUTH_SCOPES, type OAuthScope } from '../core/auth/scopes';
import { AppError, NotFoundError, UnauthorizedError } from '../core/errors/app-error';
import {
  checkAccessToken,
  exchangeCode,
  insertClient,
  insertCode,
  revokeGrant,
  rotateGrant,
  selectClient,
  selectCode,
  selectGrants,
} from '../core/oauth/store';
import type { OAuthGrantDto } from '../core/schemas/identity';
import type { Page } from './chats';
import type { Caller, OperationDeps } from './deps';
import type { RateLimitState } from './key-memory';
import { countCalls, type UserLimit } from './limits';

const CODE_TTL_SECONDS = 300;
/** How long a consent page may be answered after it was shown. */
const CONSENT_TTL_MS = 10 * 60_000;

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

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  /** RFC 6749 5.1: the access token's scopes, space-separated. */
  scope: string;
}

/** Why a token request was refused, in RFC 6749's terms (the transport maps them to its errors). */
export type TokenRefusal = 'invalid_grant' | 'invalid_scope';

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
 * 6749 3.3 lets the server choose), undefined when it names one we do not have.
 */
export function requestedScopes(scopes: readonly string[]): OAuthScope[] | undefined {
  const named = scopes.filter(Boolean);
  if (named.length === 0) return [...OAUTH_SCOPES];
  return named.every(isOAuthScope) ? [...new Set(named)] : undefined;
}

/**
 * OAuth 2.1 for MCP clients that connect by sign-in: dynamic registration (public clients only,
 * PKCE S256), codes issued on the signed-in user's consent, and grants whose access and refresh
 * tokens are stored as hashes and rotate on each refresh. The HTTP side is the MCP SDK's router.
 */
export function createOAuthOperations(deps: OperationDeps) {
  const { config, db } = deps;
  const accessTtlSeconds = Math.floor(config.OAUTH_ACCESS_TOKEN_TTL / 1000);
  const refreshTtlSeconds = Math.floor(config.OAUTH_REFRESH_TOKEN_TTL / 1000);
  // A key of its own derived from APP_SECRET: a consent signature is no other HMAC's.
  const consentKey = createHmac('sha256', config.APP_SECRET).update('oauth/consent/v1').digest();

  const tokens = (access: string, refresh: string, scopes: readonly string[]): IssuedTokens => ({
    access_token: access,
    token_type: 'Bearer',
    expires_in: accessTtlSeconds,
    refresh_token: refresh,
    scope: scopes.join(' '),
  });

  return {
    async registerClient(metadata: Record<string, unknown>): Promise<Record<string, unknown>> {
      const client = {
        ...metadata,
        client_id: randomUUID(),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      };
      await insertClient(db.pool, client.client_id, client);
      return client;
    },

    getClient: (clientId: string) => selectClient(db.pool, clientId),

    /** The request, signed for this user, to come back with the consent form. */
    signConsent(userId: string, request: AuthorizationRequest): string {
      const payload = Buffer.from(
        JSON.stringify({ ...request, userId, exp: Date.now() + CONSENT_TTL_MS }),
      ).toString('base64url');
      return `${payload}.${createHmac('sha256', consentKey).update(payload).digest('base64url')}`;
    },

    /** The signed request, if it is this user's, unaltered and recent; else undefined. */
    verifyConsent(userId: string, signed: string): AuthorizationRequest | undefined {
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
    },

    /** A one-time code for the consented request; stored hashed. */
    async issueCode(caller: Caller, request: AuthorizationRequest): Promise<string> {
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
      return code;
    },

    codeFor: (clientId: string, code: string) => selectCode(db.pool, hashToken(code), clientId),

    /** Consumes the code into a grant; undefined when it is unknown, spent, expired or not this client's. */
    async exchangeCode(clientId: string, code: string): Promise<IssuedTokens | undefined> {
      const access = newOAuthToken(OAUTH_ACCESS_PREFIX);
      const refresh = newOAuthToken(OAUTH_REFRESH_PREFIX);
      const used = await exchangeCode(db.pool, {
        codeHash: hashToken(code),
        clientId,
        grantId: randomUUID(),
        accessTokenHash: hashToken(access),
        accessTtlSeconds,
        refreshTokenHash: hashToken(refresh),
        refreshTtlSeconds,
      });
      return used ? tokens(access, refresh, used.scopes) : undefined;
    },

    /**
     * New access and refresh tokens; the refresh token presented stops working, and presenting it
     * again revokes the whole grant (see rotateGrant). `scopes` narrows the new access token to
     * some of the granted scopes (RFC 6749 6); none keeps them all.
     */
    async refresh(
      clientId: string,
      refreshToken: string,
      scopes?: readonly string[],
    ): Promise<IssuedTokens | TokenRefusal> {
      const asked = scopes?.filter(Boolean);
      const access = newOAuthToken(OAUTH_ACCESS_PREFIX);
      const refresh = newOAuthToken(OAUTH_REFRESH_PREFIX);
      const rotation = await rotateGrant(db.pool, {
        refreshTokenHash: hashToken(refreshToken),
        clientId,
        accessTokenHash: hashToken(access),
        accessTtlSeconds,
        newRefreshTokenHash: hashToken(refresh),
        refreshTtlSeconds,
        scopes: asked?.length ? [...new Set(asked)] : null,
      });
      if (rotation.outcome === 'rotated') return tokens(access, refresh, rotation.accessScopes);
      if (rotation.outcome === 'reused')
        deps.logger.warn(
          { clientId },
          'a spent OAuth refresh token was presented again; its grant is revoked',
        );
      return rotation.outcome === 'scope-too-wide' ? 'invalid_scope' : 'invalid_grant';
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

    /** RFC 7009: a client revokes its own token (access or refresh); the whole grant ends. */
    async revokeToken(clientId: string, token: string): Promise<void> {
      await revokeGrant(db.pool, { clientId, tokenHash: hashToken(token) });
    },

    /** The caller's live grants, beside their API keys. */
    async listGrants(caller: Caller): Promise<Page<OAuthGrantDto>> {
      const rows = await selectGrants(db.pool, caller.userId);
      return {
        data: rows.map((r) => ({
          id: r.id,
          clientId: r.clientId,
          clientName: r.clientName,
          lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
          createdAt: r.createdAt.toISOString(),
        })),
        nextCursor: null,
      };
    },

    async revokeGrant(caller: Caller, grantId: string): Promise<void> {
      if (!(await revokeGrant(db.pool, { userId: caller.userId, id: grantId })))
        throw new NotFoundError('NOT_FOUND', 'No such authorization.');
    },
  };
}

export type OAuthOperations = ReturnType<typeof createOAuthOperations>;
