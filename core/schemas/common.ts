import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ValidationError } from '../errors/app-error';

extendZodWithOpenApi(z);

/** Every list answers `{ data, nextCursor }`; the cursor is opaque to clients. */
export function listSchema<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      data: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .openapi({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
    })
    .openapi(name);
}

export const limitQuery = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .openapi({ type: 'integer', minimum: 1, maximum: max, default: fallback });

export const cursorQuery = z
  .string()
  .max(512)
  .optional()
  .openapi({ description: 'The `nextCursor` of the previous page.' });

/** A keyset position: the sort timestamp and the id that breaks its ties. */
const keysetSchema = z.object({ a: z.iso.datetime(), i: z.uuid() });
export interface Keyset {
  at: Date;
  id: string;
}

export function encodeCursor(position: Keyset): string {
  return Buffer.from(JSON.stringify({ a: position.at.toISOString(), i: position.id })).toString('base64url');
}

/** A cursor this service did not issue is a client error, never a 500 or an empty page. */
export function decodeCursor(cursor: string): Keyset {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    json = undefined;
  }
  const parsed = keysetSchema.safeParse(json);
  if (!parsed.success)
    throw new ValidationError([{ path: 'query.cursor', message: 'Not a cursor issued by this list.' }]);
  return { at: new Date(parsed.data.a), id: parsed.data.i };
}

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
