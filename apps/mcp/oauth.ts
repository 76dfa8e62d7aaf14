import { parse as parseQueryString } from 'node:querystring';
import { parse as parseCookie } from 'cookie';
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { z } from 'zod';
import { OAUTH_SCOPES } from '../../core/auth/scopes';
import { assertSameOrigin } from '../../core/auth/same-origin';
import { sessionCookie, sessionCookieName } from '../../core/auth/tokens';
import { AppError } from '../../core/errors/app-error';
import { credentialsSchema } from '../../core/schemas/identity';
import {
  authorizationQuerySchema,
  clientRegistrationSchema,
  revocationRequestSchema,
  tokenRequestSchema,
  type AuthorizationQuery,
} from '../../core/schemas/oauth';
import type { Caller, Operations } from '../../operations';
import { consentPage, errorPage, sendPage, signInPage } from './oauth-pages';

const FORM_LIMIT = '16kb';
/**
 * A registration body may be this large; what is stored of it is capped far lower
 * (CLIENT_METADATA_MAX_BYTES, a 400 naming the cap), members we do not keep being dropped.
 */
const REGISTRATION_BODY_LIMIT = '64kb';
const AUTHORIZE_PATH = '/authorize';

async function sessionCaller(ops: Operations, req: Request): Promise<Caller | undefined> {
  const token = parseCookie(req.headers.cookie ?? '')[sessionCookieName(req.secure)];
  return ops.identity.authenticateSession(token, 'mcp').catch(() => undefined);
}

/**
 * The first problem of a request, as the one sentence a person or a client is given. The schemas'
 * own sentences end with a full stop; zod's and the shared ones (`stored`) do not, and name no
 * field, so the field is put before them.
 */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'The request is not valid.';
  return issue.message.endsWith('.') || issue.path.length === 0
    ? issue.message
    : `${issue.path.join('.')}: ${issue.message}.`;
}

/** An authorization request's parameters, or 400 with the first problem (shown on our own page). */
function authorizationQuery(params: unknown): AuthorizationQuery {
  const parsed = authorizationQuerySchema.safeParse(params);
  if (!parsed.success) throw new AppError('INVALID_REQUEST', firstIssue(parsed.error));
  return parsed.data;
}

/**
 * Browser-based clients (the MCP Inspector) discover, register and exchange from another origin:
 * these endpoints take no cookie, so any origin may call them.
 */
const anyOrigin: RequestHandler = (req, res, next) => {
  res.setHeader('access-control-allow-origin', '*');
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  const asked = req.headers['access-control-request-headers'];
  if (asked) res.setHeader('access-control-allow-headers', asked);
  res.setHeader('access-control-max-age', '86400');
  res.status(204).end();
};

const onlyMethods =
  (...methods: string[]): RequestHandler =>
  (req, _res, next) => {
    if (methods.includes(req.method)) return next();
    throw new AppError('METHOD_NOT_ALLOWED', `Use ${methods.join(' or ')}.`, undefined, {
      allow: methods.join(', '),
    });
  };

/** RFC 6749 5.2's error answer. */
function oauthError(res: Response, error: string, description: string): void {
  res.status(400).json({ error, error_description: description });
}

/** An AppError thrown by a page's work, shown on our own error page; anything else is a 500. */
async function onPage(res: Response, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    sendPage(res, errorPage(err.status, err.message));
  }
}

/**
 * OAuth 2.1 for MCP clients that connect by sign-in: metadata (RFC 8414), registration (RFC
 * 7591), the authorization page, the token and revocation endpoints (RFC 7009). Clients register
 * public (PKCE S256, no secret to keep); consent is given by the user signed in to the product
 * (the session cookie), on pages of ours; a user not signed in signs in on them first. Until the
 * user has answered, every refusal is shown on our own page: nothing is sent to an address anyone
 * could have registered.
 */
export function createOAuthRouter(ops: Operations, options: { issuer: URL }): Router {
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: FORM_LIMIT });
  const endpoint = (path: string) => new URL(path, options.issuer).href;
  const metadata = {
    issuer: options.issuer.href,
    authorization_endpoint: endpoint(AUTHORIZE_PATH),
    token_endpoint: endpoint('/token'),
    registration_endpoint: endpoint('/register'),
    revocation_endpoint: endpoint('/revoke'),
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    // Every client is public: none authenticates at the token or revocation endpoint.
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: OAUTH_SCOPES,
    authorization_response_iss_parameter_supported: true,
  };

  router.all(
    '/.well-known/oauth-authorization-server',
    anyOrigin,
    onlyMethods('GET', 'HEAD'),
    (_req, res) => {
      res.json(metadata);
    },
  );

  router.all(
    '/register',
    anyOrigin,
    onlyMethods('POST'),
    express.json({ limit: REGISTRATION_BODY_LIMIT }),
    async (req, res) => {
      res.setHeader('cache-control', 'no-store');
      const parsed = clientRegistrationSchema.safeParse(req.body);
      if (!parsed.success) {
        const redirects = parsed.error.issues[0]?.path[0] === 'redirect_uris';
        return oauthError(
          res,
          redirects ? 'invalid_redirect_uri' : 'invalid_client_metadata',
          firstIssue(parsed.error),
        );
      }
      res.status(201).json(await ops.oauth.registerClient(parsed.data, req.ip ?? 'unknown'));
    },
  );

  router.all(AUTHORIZE_PATH, onlyMethods('GET', 'HEAD'), (req, res) =>
    onPage(res, async () => {
      const query = authorizationQuery(req.query);
      const caller = await sessionCaller(ops, req);
      if (caller) return sendPage(res, consentPage(await ops.oauth.consent(caller, query)));
      const { client } = await ops.oauth.authorization(query);
      sendPage(res, signInPage({ client, next: req.originalUrl }));
    }),
  );

  router.all('/token', anyOrigin, onlyMethods('POST'), form, async (req, res) => {
    res.setHeader('cache-control', 'no-store');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const parsed = tokenRequestSchema.safeParse(body);
    if (!parsed.success) {
      const unsupported =
        typeof body.grant_type === 'string' && parsed.error.issues[0]?.path[0] === 'grant_type';
      return oauthError(
        res,
        unsupported ? 'unsupported_grant_type' : 'invalid_request',
        firstIssue(parsed.error),
      );
    }
    const request = parsed.data;
    const answer =
      request.grant_type === 'authorization_code'
        ? await ops.oauth.exchangeCode(request)
        : await ops.oauth.refresh(request);
    if ('error' in answer) return oauthError(res, answer.error, answer.error_description);
    res.json(answer);
  });

  router.all('/revoke', anyOrigin, onlyMethods('POST'), form, async (req, res) => {
    res.setHeader('cache-control', 'no-store');
    const parsed = revocationRequestSchema.safeParse(req.body ?? {});
    if (!parsed.success) return oauthError(res, 'invalid_request', firstIssue(parsed.error));
    const refused = await ops.oauth.revokeToken(parsed.data.client_id, parsed.data.token);
    if (refused) return oauthError(res, refused.error, refused.error_description);
    res.json({});
  });

  // The sign-in form of the authorization page: then back to that page, now signed in. A failed
  // attempt shows the form again, saying why.
  router.post('/oauth/sign-in', form, (req, res) =>
    onPage(res, async () => {
      assertSameOrigin(req.headers, req.protocol, req.get('host'));
      const { email, password, next } = (req.body ?? {}) as Record<string, unknown>;
      if (typeof next !== 'string' || !next.startsWith(`${AUTHORIZE_PATH}?`))
        throw new AppError(
          'INVALID_REQUEST',
          'This sign-in belongs to no authorization; start again from the app.',
        );
      const query = authorizationQuery(parseQueryString(next.slice(AUTHORIZE_PATH.length + 1)));
      const { client } = await ops.oauth.authorization(query);
      const again = (status: number, message: string) =>
        sendPage(
          res,
          signInPage({
            client,
            next,
            email: typeof email === 'string' ? email : '',
            error: { status, message },
          }),
        );
      // The same rules as the REST sign-in: an address PostgreSQL can look up, a password in bounds.
      const credentials = credentialsSchema.safeParse({ email, password });
      if (!credentials.success)
        return again(400, 'Enter your email address and your password (10 to 200 characters).');
      try {
        const { token, maxAgeSeconds } = await ops.identity.signIn(credentials.data, req.ip ?? 'unknown');
        res.setHeader('set-cookie', sessionCookie(req.secure, token, maxAgeSeconds));
        res.redirect(303, next);
      } catch (err) {
        // Wrong credentials (401), too many attempts (429), every hashing slot taken (503).
        if (!(err instanceof AppError)) throw err;
        for (const [name, value] of Object.entries(err.headers ?? {})) res.setHeader(name, value);
        again(err.status, err.message);
      }
    }),
  );

  // The consent form: the signed request it carries names the client, redirect and challenge.
  router.post('/oauth/consent', form, (req, res) =>
    onPage(res, async () => {
      assertSameOrigin(req.headers, req.protocol, req.get('host'));
      const caller = await sessionCaller(ops, req);
      if (!caller)
        throw new AppError('UNAUTHORIZED', 'You are no longer signed in; start again from the app.');
      const { request: signed, decision } = (req.body ?? {}) as Record<string, unknown>;
      if (typeof signed !== 'string')
        throw new AppError(
          'INVALID_REQUEST',
          'This authorization is invalid or has expired; start again from the app.',
        );
      const { location } = await ops.oauth.decide(caller, signed, decision === 'allow');
      res.redirect(302, location);
    }),
  );

  return router;
}
