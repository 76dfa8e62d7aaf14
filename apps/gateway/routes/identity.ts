import type { Request } from 'express';
import { serialize as serializeCookie } from 'cookie';
import { z } from 'zod';
import { SESSION_COOKIE } from '../../../core/auth/tokens';
import {
  apiKeyListSchema,
  apiKeyNameSchema,
  createdApiKeySchema,
  credentialsSchema,
  userEnvelopeSchema,
} from '../../../core/schemas/identity';
import type { Operations } from '../../../operations';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';
import { assertSameOrigin } from '../middleware/auth';

const setCookieHeader = z.object({ 'set-cookie': z.string() });

function sessionCookie(req: Request, token: string, maxAgeSeconds: number): string {
  return serializeCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: req.secure,
    maxAge: maxAgeSeconds,
  });
}

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
    errors: ['FORBIDDEN', 'EMAIL_TAKEN', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ body }, req) => {
      refuseCrossSite(req);
      return { status: 201, body: { user: await ops.identity.signUp(body) } };
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
    errors: ['FORBIDDEN', 'UNAUTHORIZED', 'RATE_LIMITED', 'INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE'],
    handler: async ({ body }, req) => {
      refuseCrossSite(req);
      const { user, token, maxAgeSeconds } = await ops.identity.signIn(body, req.ip ?? 'unknown');
      return {
        status: 200,
        body: { user },
        headers: { 'set-cookie': sessionCookie(req, token, maxAgeSeconds) },
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
      return { status: 204, headers: { 'set-cookie': sessionCookie(req, '', 0) } };
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
    errors: ['INVALID_JSON', 'UNSUPPORTED_MEDIA_TYPE'],
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
    request: {},
    responses: { 200: { description: 'Active keys', schema: apiKeyListSchema } },
    errors: [],
    handler: async (_input, req) => ({ status: 200, body: await ops.identity.listApiKeys(currentAuth(req)) }),
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
}
