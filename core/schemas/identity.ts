import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { NO_NUL, NO_NUL_MESSAGE, listSchema } from './common';

extendZodWithOpenApi(z);

export const credentialsSchema = z
  .object({
    // Lowercased before validation so one mailbox is one account whatever its spelling.
    email: z.preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      z.email({ pattern: z.regexes.rfc5322Email }).max(254),
    ),
    password: z.string().min(10).max(200),
  })
  .strict()
  .openapi('Credentials');

export const userSchema = z
  .object({ id: z.uuid(), email: z.string(), createdAt: z.iso.datetime() })
  .openapi('User');

export const userEnvelopeSchema = z.object({ user: userSchema }).openapi('UserEnvelope');

export function toUserDto(row: { id: string; email: string; createdAt: Date }) {
  return { id: row.id, email: row.email, createdAt: row.createdAt.toISOString() };
}

export const apiKeyNameSchema = z
  .object({ name: z.string().trim().min(1).max(80).regex(NO_NUL, NO_NUL_MESSAGE) })
  .strict()
  .openapi('NewApiKey');

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The first 14 characters of the key.' }),
    lastUsedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .openapi('ApiKey');

export const createdApiKeySchema = apiKeySchema
  .extend({
    key: z.string().openapi({ description: 'The full secret, `svck_live_…`; shown only in this answer.' }),
  })
  .openapi('CreatedApiKey');

export const apiKeyListSchema = listSchema(apiKeySchema, 'ApiKeyList');

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
