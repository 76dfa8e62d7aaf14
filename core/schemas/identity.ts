import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  exampleApiKey,
  exampleCreatedApiKey,
  exampleCredentials,
  exampleOAuthGrant,
  exampleUser,
} from './examples';
import { cursorQuery, limitQuery, listSchema, stored, visibleText } from './common';

extendZodWithOpenApi(z);

export const credentialsSchema = z
  .object({
    // Lowercased before validation so one mailbox is one account whatever its spelling.
    email: z.preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      stored(z.email({ pattern: z.regexes.rfc5322Email }).max(254)),
    ),
    password: z.string().min(10).max(200),
  })
  .strict()
  .openapi('Credentials', { example: exampleCredentials });

export const userSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    createdAt: z.iso.datetime(),
    creditBalance: z.string().openapi({
      description:
        'Credits left, a decimal string like `creditCost` (extension). A tool call reserves its price from it when it starts; a failed call gives it back.',
      example: '100',
    }),
  })
  .openapi('User', { example: exampleUser });

export const userEnvelopeSchema = z
  .object({ user: userSchema })
  .openapi('UserEnvelope', { example: { user: exampleUser } });

export function toUserDto(row: {
  id: string;
  email: string;
  createdAt: Date;
  creditBalance: { toString(): string };
}) {
  return {
    id: row.id,
    email: row.email,
    createdAt: row.createdAt.toISOString(),
    creditBalance: formatCredits(row.creditBalance.toString()),
  };
}

/** `100.0000` as stored reads `100`; `2.5000` reads `2.5`. */
function formatCredits(stored: string): string {
  return stored.includes('.') ? stored.replace(/\.?0+$/, '') : stored;
}

export const apiKeyNameSchema = z
  .object({ name: visibleText(80) })
  .strict()
  .openapi('NewApiKey', { example: { name: exampleApiKey.name } });

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The first 14 characters of the key.' }),
    lastUsedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .openapi('ApiKey', { example: exampleApiKey });

export const createdApiKeySchema = apiKeySchema
  .extend({
    key: z.string().openapi({ description: 'The full secret, `svck_live_…`; shown only in this answer.' }),
  })
  .openapi('CreatedApiKey', { example: exampleCreatedApiKey });

export const apiKeyListSchema = listSchema(apiKeySchema, 'ApiKeyList', exampleApiKey);
export const apiKeyListQuerySchema = z.object({ limit: limitQuery(100, 50), cursor: cursorQuery });

export function toApiKeyDto(row: {
  id: string;
  name: string;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** An MCP client's access by OAuth sign-in, listed and revoked beside API keys. */
export const oauthGrantSchema = z
  .object({
    id: z.uuid(),
    clientId: z.string(),
    clientName: z.string().openapi({ description: 'The name the client registered with.' }),
    lastUsedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .openapi('OAuthGrant', { example: exampleOAuthGrant });
export type OAuthGrantDto = z.infer<typeof oauthGrantSchema>;

export const oauthGrantListSchema = listSchema(oauthGrantSchema, 'OAuthGrantList', exampleOAuthGrant);
/** Paged as the API keys beside them are. */
export const oauthGrantListQuerySchema = apiKeyListQuerySchema;
