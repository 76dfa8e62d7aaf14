import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { stored } from './common';
import { exampleMetadata } from './examples';

extendZodWithOpenApi(z);

/** A send's metadata (DECISIONS): at most 16 pairs, keys of 1–40 characters, values up to 512. */
export const MAX_METADATA_PAIRS = 16;
export const MAX_METADATA_KEY = 40;
export const MAX_METADATA_VALUE = 512;

/**
 * A metadata key. No `=`: the Temporal search attribute holds each pair as `key=value`, and the
 * first `=` must end the key.
 */
const metadataKeySchema = stored(
  z
    .string()
    .min(1)
    .max(MAX_METADATA_KEY)
    .regex(/^[^=]*$/, 'may not contain "="'),
);
const metadataValueSchema = stored(z.string().max(MAX_METADATA_VALUE));

export const runMetadataSchema = z
  .record(metadataKeySchema, metadataValueSchema)
  .refine((pairs) => Object.keys(pairs).length <= MAX_METADATA_PAIRS, {
    message: `at most ${MAX_METADATA_PAIRS} keys`,
  })
  .openapi({
    maxProperties: MAX_METADATA_PAIRS,
    description: `Your own string pairs for the run (extension): at most ${MAX_METADATA_PAIRS} keys of 1–${MAX_METADATA_KEY} characters (no "="), values of at most ${MAX_METADATA_VALUE} characters. Shown in the snapshot, the runs lists and the agent events, and filtered on with metadata[<key>]=<value>.`,
    example: exampleMetadata,
    'x-extension': true,
  });
export type RunMetadata = z.output<typeof runMetadataSchema>;

/** A `key=value` keyword of AgentRunMetadata is indexed when it is at most this long (UTF-8)… */
const METADATA_KEYWORD_MAX_BYTES = 256;
/**
 * …and while the list's JSON stays within this: Temporal refuses a start whose search attribute
 * value passes `limit.searchAttributesSizeOfValue` (2 KB by default), and 16 pairs at their
 * longest would.
 */
const METADATA_KEYWORDS_MAX_BYTES = 2_000;

// The schemas are shared with the console, which runs in a browser: no Buffer there.
const encoder = new TextEncoder();
const utf8Bytes = (text: string) => encoder.encode(text).length;

/**
 * The run's metadata as AgentRunMetadata keywords: each pair `key=value`, in key order, those short
 * enough to index (see above); the memo holds every pair.
 */
export function metadataKeywords(metadata: RunMetadata): string[] {
  const keywords: string[] = [];
  for (const key of Object.keys(metadata).sort()) {
    const keyword = `${key}=${metadata[key]}`;
    if (utf8Bytes(keyword) > METADATA_KEYWORD_MAX_BYTES) continue;
    if (utf8Bytes(JSON.stringify([...keywords, keyword])) > METADATA_KEYWORDS_MAX_BYTES) break;
    keywords.push(keyword);
  }
  return keywords;
}
