import { z } from 'zod';
import { stored } from './common';

/**
 * The OAuth endpoints' requests (apps/mcp/oauth.ts). Each refusal is one short sentence, since it
 * is shown to a person (the authorization page) or handed to one by the client
 * (`error_description`): the first issue's message is the answer.
 */

/** The most a registered client's metadata may hold, as the JSON stored. */
export const CLIENT_METADATA_MAX_BYTES = 4096;
/** The longest client name a consent page shows. */
const CLIENT_NAME_MAX = 100;

/** Hosts a plain-http redirect may name: this machine (RFC 8252 7.3, a native app's listener). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * https anywhere, or http to a loopback host only (as the MCP authorization spec asks): a code
 * sent over plain http elsewhere can be read on the way. No fragment (RFC 6749 3.1.2) and no
 * user name or password in the URL.
 */
export function isAllowedRedirectUri(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.hash || url.username || url.password || value.includes('#')) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
}

export const REDIRECT_URI_RULE =
  'Each redirect URI must be an https URL, or http on 127.0.0.1, [::1] or localhost, without a fragment.';

const text = stored(z.string());

/**
 * What a client may register (RFC 7591 2), every other member dropped. It is stored as given, so
 * its whole JSON is capped, beside the name a person is shown.
 */
export const clientRegistrationSchema = z
  .object({
    redirect_uris: z
      .array(stored(z.string()).refine(isAllowedRedirectUri, REDIRECT_URI_RULE), {
        error: 'redirect_uris is required: the URLs the app receives its answer at.',
      })
      .min(1, 'redirect_uris is required: the URLs the app receives its answer at.')
      .max(10, 'At most 10 redirect URIs may be registered.'),
    client_name: stored(
      z.string().max(CLIENT_NAME_MAX, `client_name may be at most ${CLIENT_NAME_MAX} characters.`),
    ).optional(),
    client_uri: text.optional(),
    logo_uri: text.optional(),
    tos_uri: text.optional(),
    policy_uri: text.optional(),
    contacts: z.array(text).optional(),
    scope: text.optional(),
    grant_types: z.array(text).optional(),
    response_types: z.array(text).optional(),
    token_endpoint_auth_method: text.optional(),
    software_id: text.optional(),
    software_version: text.optional(),
  })
  .strip()
  .refine(
    (metadata) => Buffer.byteLength(JSON.stringify(metadata)) <= CLIENT_METADATA_MAX_BYTES,
    `The client metadata may be at most ${CLIENT_METADATA_MAX_BYTES} bytes of JSON.`,
  );
export type ClientRegistration = z.output<typeof clientRegistrationSchema>;

const NO_CLIENT = 'The request names no app (client_id).';

/** An authorization request's parameters (RFC 6749 4.1.1, PKCE: RFC 7636 4.3). */
export const authorizationQuerySchema = z.object({
  client_id: z.string({ error: NO_CLIENT }).min(1, NO_CLIENT).max(200, 'This app is not registered here.'),
  redirect_uri: z.string({ error: 'The redirect URI is not a single URL.' }).max(2048).optional(),
  response_type: z.literal('code', {
    error: 'The app must ask for an authorization code (response_type=code).',
  }),
  code_challenge: z
    .string({ error: 'The app sent no PKCE code challenge (code_challenge).' })
    .regex(/^[A-Za-z0-9_-]{43}$/, 'The PKCE code challenge is not an S256 challenge.'),
  code_challenge_method: z.literal('S256', {
    error: 'The app must use PKCE with S256 (code_challenge_method=S256).',
  }),
  scope: z.string({ error: 'The scope is not a single list.' }).max(1000).optional(),
  state: z
    .string({ error: 'The state is not a single value.' })
    .max(2048, 'The state is longer than 2048 characters.')
    .optional(),
  resource: z.url({ error: 'The resource the app names is not a URL.' }).optional(),
});
export type AuthorizationQuery = z.output<typeof authorizationQuerySchema>;

/** RFC 7636 4.1: 43 to 128 unreserved characters (a verifier of 32 random bytes is 43). */
export const codeVerifierSchema = z
  .string({ error: 'code_verifier is required.' })
  .regex(
    /^[A-Za-z0-9._~-]{43,128}$/,
    'code_verifier must be 43 to 128 characters of letters, digits, "-", ".", "_" and "~".',
  );

const required = (name: string) =>
  z
    .string({ error: `${name} is required.` })
    .min(1, `${name} is required.`)
    .max(2048, `${name} is too long.`);

const tokenResource = z.url({ error: 'resource must be a URL.' }).optional();

/** The token endpoint's two grants (RFC 6749 4.1.3, 6). */
export const tokenRequestSchema = z.discriminatedUnion(
  'grant_type',
  [
    z.object({
      grant_type: z.literal('authorization_code'),
      client_id: required('client_id'),
      code: required('code'),
      code_verifier: codeVerifierSchema,
      redirect_uri: z.string({ error: 'redirect_uri must be a single URL.' }).optional(),
      resource: tokenResource,
    }),
    z.object({
      grant_type: z.literal('refresh_token'),
      client_id: required('client_id'),
      refresh_token: required('refresh_token'),
      scope: z.string({ error: 'scope must be a single list.' }).optional(),
      resource: tokenResource,
    }),
  ],
  { error: 'grant_type must be authorization_code or refresh_token.' },
);
export type TokenRequest = z.output<typeof tokenRequestSchema>;

/** RFC 7009 2.1. */
export const revocationRequestSchema = z.object({
  client_id: required('client_id'),
  token: required('token'),
  token_type_hint: z.string().optional(),
});
