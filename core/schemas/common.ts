import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/**
 * The routes a caller comes by: the REST API, the MCP route, the console. Recorded on runs, tool
 * calls and plan decisions, and as a run's `AgentRunVia` search attribute.
 */
export const TRANSPORTS = ['rest', 'mcp', 'console'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/** Every list answers `{ data, nextCursor }`; the cursor is opaque to clients. */
export function listSchema<T extends z.ZodType>(item: T, name: string, example: z.output<T>) {
  return z
    .object({
      data: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .openapi({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    })
    .openapi(name, { example: { data: [example], nextCursor: null } });
}

/**
 * A registered component or null: `anyOf` the component's `$ref` and `null` in the document.
 * zod-to-openapi renders `.nullable()` of a component as `allOf` with it, which null fails.
 */
export const nullableRef = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

export const limitQuery = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .openapi({ type: 'integer', minimum: 1, maximum: max, default: fallback });

/**
 * A cursor is the keyset position in hex: 12 digits of epoch milliseconds, then the 32 of the
 * tie-breaking uuid. Every string of that shape is a position, so the document's pattern says
 * exactly what is accepted; clients still treat it as opaque.
 */
const CURSOR = /^[0-9a-f]{44}$/;

export const cursorQuery = z
  .string()
  .regex(CURSOR, 'Not a cursor issued by this list.')
  .optional()
  .openapi({ description: 'The `nextCursor` of the previous page.' });

/** A keyset position: the sort timestamp and the id that breaks its ties. */
export interface Keyset {
  at: Date;
  id: string;
}

export function encodeCursor(position: Keyset): string {
  return position.at.getTime().toString(16).padStart(12, '0') + position.id.replace(/-/g, '');
}

/** The position a cursor names; cursorQuery has checked its shape. */
export function decodeCursor(cursor: string): Keyset {
  const hex = cursor.slice(12);
  return {
    at: new Date(parseInt(cursor.slice(0, 12), 16)),
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
  };
}

/** Free text stored in PostgreSQL, which cannot hold a NUL character. */
const NO_NUL = /^[^\u0000]*$/;
const NO_NUL_MESSAGE = 'may not contain NUL characters';
const WELL_FORMED_MESSAGE = 'may not contain a lone UTF-16 surrogate (half of a character)';
/**
 * Half of a UTF-16 pair standing alone: what `String.prototype.isWellFormed` finds, as a regex,
 * since the console's browsers read these schemas too and not all of them have that method.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:^|[^\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (value: string) => !LONE_SURROGATE.test(value);

/**
 * A string a client sends that PostgreSQL will store: no NUL (a text column refuses it, and so
 * does jsonb) and well-formed UTF-16 (jsonb refuses a lone surrogate, `"\ud800"` in JSON). For free
 * text the NUL rule is a pattern, so the document states it; a format (`uri`, `email`) already
 * rules a NUL out in the document's terms, and a pattern would take the format's place there. No
 * JSON Schema can name a lone surrogate.
 */
export function stored<T extends z.ZodString | z.ZodStringFormat>(schema: T): T {
  const noNul =
    schema instanceof z.ZodStringFormat
      ? schema.refine((value) => NO_NUL.test(value), NO_NUL_MESSAGE)
      : schema.regex(NO_NUL, NO_NUL_MESSAGE);
  return noNul.refine(wellFormed, WELL_FORMED_MESSAGE) as T;
}

/**
 * A name checked as sent, then trimmed: at most `max` characters with at least one that is not
 * white space, and no NUL. (Trimmed first, "\r" passed the document's minLength and was refused.)
 * White space is spelled out, not `\s`: the document's pattern is read by other regex engines
 * (Python's `\s` and JavaScript's differ on \x1c-\x1f and \ufeff), and the trim takes what the
 * pattern means.
 */
const SPACE = '\\t\\n\\v\\f\\r ';
const EDGE_SPACE = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, 'g');
export const visibleText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(
      new RegExp(`^[^\\u0000]*[^${SPACE}\\u0000][^\\u0000]*$`),
      'must have a character other than white space, and no NUL',
    )
    .refine(wellFormed, WELL_FORMED_MESSAGE)
    .overwrite((value) => value.replace(EDGE_SPACE, ''));

/**
 * One page of a keyset query that fetched `limit + 1` rows: the extra row only says another page
 * exists, and the last row kept is where the next page starts.
 */
export function page<T>(rows: T[], limit: number, position: (row: T) => Keyset) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(position(last)) : null };
}

export function isoOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}
