import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { serialize as serializeCookie } from 'cookie';
import { z } from 'zod';
import { hashPassword, verifyPassword } from '../../../core/auth/passwords';
import {
  API_KEY_SHOWN_PREFIX_LENGTH,
  SESSION_COOKIE,
  hashToken,
  newApiKey,
  newSessionToken,
} from '../../../core/auth/tokens';
import { AppError, ConflictError, NotFoundError, UnauthorizedError } from '../../../core/errors/app-error';
import {
  apiKeyListSchema,
  apiKeyNameSchema,
  createdApiKeySchema,
  credentialsSchema,
  toApiKeyDto,
  toUserDto,
  userEnvelopeSchema,
} from '../../../core/schemas/identity';
import type { GatewayDeps } from '../deps';
import { currentAuth } from '../http/auth-context';
import type { RouteTable } from '../http/route-table';
import { assertSameOrigin } from '../middleware/auth';
import { consumeOrThrow, postgresLimiter } from '../middleware/rate-limit';

const SIGN_IN_WINDOW_SECONDS = 15 * 60;
const WRONG_CREDENTIALS = 'The email or password is wrong.';

const setCookieHeader = z.object({ 'set-cookie': z.string() });

interface UserRow {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: Date;
}

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

export function registerIdentityRoutes(routes: RouteTable, deps: GatewayDeps): void {
  const { config } = deps;
  // Keyed by email, a distributed guess at one account is throttled; keyed by IP, one client
  // trying many accounts is.
  const signInByEmail = postgresLimiter(deps, {
    keyPrefix: 'sign-in-email',
    points: config.SIGN_IN_ATTEMPTS_PER_15_MINUTES,
    durationSeconds: SIGN_IN_WINDOW_SECONDS,
  });
  const signInByIp = postgresLimiter(deps, {
    keyPrefix: 'sign-in-ip',
    points: config.SIGN_IN_ATTEMPTS_PER_15_MINUTES,
    durationSeconds: SIGN_IN_WINDOW_SECONDS,
  });
  const tooManyAttempts = 'Too many sign-in attempts; retry later.';

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
      if (!config.ALLOW_SIGN_UP) throw new AppError('FORBIDDEN', 'Sign-up is disabled.');
      const passwordHash = await hashPassword(body.password);
      // ON CONFLICT rather than check-then-insert: two racing sign-ups get one account, one 409.
      const { rows } = await deps.db.pool.query<UserRow>(
        `INSERT INTO "User" (id, email, "passwordHash", "updatedAt") VALUES ($1, $2, $3, now())
         ON CONFLICT (email) DO NOTHING RETURNING id, email, "createdAt"`,
        [randomUUID(), body.email, passwordHash],
      );
      const user = rows[0];
      if (!user) throw new ConflictError('EMAIL_TAKEN', 'An account with this email already exists.');
      return { status: 201, body: { user: toUserDto(user) } };
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
      const ip = req.ip ?? 'unknown';
      // Hashed: a key fits the table's varchar(255) whatever the email, and no email is stored there.
      const emailKey = hashToken(body.email);
      await consumeOrThrow(signInByIp, ip, tooManyAttempts);
      await consumeOrThrow(signInByEmail, emailKey, tooManyAttempts);
      const { rows } = await deps.db.pool.query<UserRow>(
        'SELECT id, email, "passwordHash", "createdAt" FROM "User" WHERE email = $1',
        [body.email],
      );
      const user = rows[0];
      const passwordMatches = await verifyPassword(user?.passwordHash, body.password);
      if (!user || !passwordMatches) throw new UnauthorizedError(WRONG_CREDENTIALS);
      // Only failures should count: the owner's earlier typos are forgotten, and a shared address
      // (an office behind one NAT) is not locked out by its members signing in.
      await Promise.all([signInByEmail.delete(emailKey), signInByIp.reward(ip)]);
      const token = newSessionToken();
      const maxAgeSeconds = Math.floor(config.SESSION_TTL / 1000);
      await deps.db.pool.query(
        `INSERT INTO "Session" (id, "userId", "tokenHash", "expiresAt")
         VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
        [randomUUID(), user.id, hashToken(token), maxAgeSeconds],
      );
      return {
        status: 200,
        body: { user: toUserDto(user) },
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
      await deps.db.pool.query('DELETE FROM "Session" WHERE id = $1', [currentAuth(req).sessionId]);
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
    handler: async (_input, req) => {
      const user = await deps.db.prisma.user.findUniqueOrThrow({
        where: { id: currentAuth(req).userId },
        select: { id: true, email: true, createdAt: true },
      });
      return { status: 200, body: { user: toUserDto(user) } };
    },
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
    handler: async ({ body }, req) => {
      const key = newApiKey();
      const row = await deps.db.prisma.apiKey.create({
        data: {
          userId: currentAuth(req).userId,
          name: body.name,
          prefix: key.slice(0, API_KEY_SHOWN_PREFIX_LENGTH),
          keyHash: hashToken(key),
        },
      });
      return { status: 201, body: { ...toApiKeyDto(row), key } };
    },
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
    handler: async (_input, req) => {
      const rows = await deps.db.prisma.apiKey.findMany({
        where: { userId: currentAuth(req).userId, revokedAt: null },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      });
      return { status: 200, body: { data: rows.map(toApiKeyDto), nextCursor: null } };
    },
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
      const { count } = await deps.db.prisma.apiKey.updateMany({
        where: { id: params.keyId, userId: currentAuth(req).userId, revokedAt: null },
        data: { revokedAt: new Date() },
      });
      if (count === 0) throw new NotFoundError('KEY_NOT_FOUND', 'No such API key.');
      return { status: 204 };
    },
  });
}
