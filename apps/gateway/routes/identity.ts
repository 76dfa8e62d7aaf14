import type { Request } from 'express';
import { z } from 'zod';
import { assertSameOrigin } from '../../../core/auth/same-origin';
import { sessionCookie } from '../../../core/auth/tokens';
import {
  apiKeyListQuerySchema,
  apiKeyListSchema,
  apiKeyNameSchema,
  createdApiKeySchema,
  credentialsSchema,
  oauthGrantListQuerySchema,
  oauthGrantListSchema,
  userEnvelopeSchema,
} from '../../../core/schemas/identity';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';

const setCookieHeader = z.object({ 'set-cookie': z.string() });

/** Sign-up and sign-in take no cookie yet still must not be driven by another site's page. */
function refuseCrossSite(req: Request): void {
  assertSameOrigin(req.headers, req.protocol, req.get('host'));
}

export function registerIdentityRoutes(routes: RouteTable, ops: Operations): void {
  routes.add({
    method: 'post',
    path: '/api/auth/sign-up',
    operationId: 'signUp',
    summary: 'Create an account (off when ALLOW_SIGN_UP=false)',
    tag: 'Sessions',
    auth: 'none',
    extension: true,
    request: { body: credentialsSchema },
    responses: { 201: { description: 'Account created', schema: userEnvelopeSchema } },
    errors: ['FORBIDDEN', 'EMAIL_TAKEN', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
    handler: async ({ body }, req) => {
      refuseCrossSite(req);
      return { status: 201, body: { user: await ops.identity.signUp(body, req.ip ?? 'unknown') } };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/auth/sign-in',
    operationId: 'signIn',
    summary: 'Sign in; sets the svc_session cookie',
    tag: 'Sessions',
    auth: 'none',
    extension: true,
    request: { body: credentialsSchema },
    responses: {
      200: { description: 'Signed in', schema: userEnvelopeSchema, headers: setCookieHeader },
    },
    errors: ['FORBIDDEN', 'UNAUTHORIZED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
    handler: async ({ body }, req) => {
      refuseCrossSite(req);
      const { user, token, maxAgeSeconds } = await ops.identity.signIn(body, req.ip ?? 'unknown');
      return {
        status: 200,
        body: { user },
        headers: { 'set-cookie': sessionCookie(req.secure, token, maxAgeSeconds) },
      };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/auth/sign-out',
    operationId: 'signOut',
    summary: 'End the current session and clear its cookie',
    tag: 'Sessions',
    auth: 'session',
    extension: true,
    request: {},
    responses: { 204: { description: 'Signed out', headers: setCookieHeader } },
    errors: [],
    handler: async (_input, req) => {
      await ops.identity.signOut(currentAuth(req));
      return { status: 204, headers: { 'set-cookie': sessionCookie(req.secure, '', 0) } };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/auth/sign-out-everywhere',
    operationId: 'signOutEverywhere',
    summary:
      'End every session of the signed-in user (all browsers and devices) and clear this cookie; revoke every OAuth grant, and every API key not created in this session',
    tag: 'Sessions',
    auth: 'session',
    extension: true,
    request: {},
    responses: { 204: { description: 'Every session ended', headers: setCookieHeader } },
    errors: [],
    handler: async (_input, req) => {
      await ops.identity.signOutEverywhere(currentAuth(req));
      return { status: 204, headers: { 'set-cookie': sessionCookie(req.secure, '', 0) } };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/auth/session',
    operationId: 'getSession',
    summary: 'The signed-in user',
    tag: 'Sessions',
    auth: 'session',
    extension: true,
    request: {},
    responses: { 200: { description: 'Signed in', schema: userEnvelopeSchema } },
    errors: [],
    handler: async (_input, req) => ({
      status: 200,
      body: { user: await ops.identity.currentUser(currentAuth(req)) },
    }),
  });

  routes.add({
    method: 'post',
    path: '/api/keys',
    operationId: 'createApiKey',
    summary: 'Create an API key; the full key is in this answer only',
    tag: 'API keys',
    auth: 'session',
    request: { body: apiKeyNameSchema },
    responses: { 201: { description: 'Key created', schema: createdApiKeySchema } },
    errors: ['LIMIT_REACHED'],
    handler: async ({ body }, req) => ({
      status: 201,
      body: await ops.identity.createApiKey(currentAuth(req), body),
    }),
  });

  routes.add({
    method: 'get',
    path: '/api/keys',
    operationId: 'listApiKeys',
    summary: 'Active API keys of the signed-in user, newest first; never the key itself',
    tag: 'API keys',
    auth: 'session',
    request: { query: apiKeyListQuerySchema },
    responses: { 200: { description: 'Active keys', schema: apiKeyListSchema } },
    errors: [],
    handler: async ({ query }, req) => ({
      status: 200,
      body: await ops.identity.listApiKeys(currentAuth(req), query),
    }),
  });

  routes.add({
    method: 'delete',
    path: '/api/keys/:keyId',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key; its next call gets 401',
    tag: 'API keys',
    auth: 'session',
    request: { params: z.object({ keyId: z.uuid() }) },
    responses: { 204: { description: 'Revoked' } },
    errors: ['KEY_NOT_FOUND'],
    handler: async ({ params }, req) => {
      await ops.identity.revokeApiKey(currentAuth(req), params.keyId);
      return { status: 204 };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/oauth-grants',
    operationId: 'listOAuthGrants',
    summary: 'MCP clients connected by OAuth sign-in, newest first; never a token',
    tag: 'API keys',
    auth: 'session',
    extension: true,
    request: { query: oauthGrantListQuerySchema },
    responses: { 200: { description: 'Live grants', schema: oauthGrantListSchema } },
    errors: [],
    handler: async ({ query }, req) => ({
      status: 200,
      body: await ops.oauth.listGrants(currentAuth(req), query),
    }),
  });

  routes.add({
    method: 'delete',
    path: '/api/oauth-grants/:grantId',
    operationId: 'revokeOAuthGrant',
    summary: "Revoke an MCP client's OAuth access; its tokens get 401 from the next call",
    tag: 'API keys',
    auth: 'session',
    extension: true,
    request: { params: z.object({ grantId: z.uuid() }) },
    responses: { 204: { description: 'Revoked' } },
    errors: ['NOT_FOUND'],
    handler: async ({ params }, req) => {
      await ops.oauth.revokeGrant(currentAuth(req), params.grantId);
      return { status: 204 };
    },
  });
}
