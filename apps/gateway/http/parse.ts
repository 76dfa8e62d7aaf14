import type { Request } from 'express';
import type { z } from 'zod';
import { ValidationError } from '../../../core/errors/app-error';

/** The request parts a route schema may describe; each is validated by its own zod schema. */
export interface RequestSchema {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Request headers the route reads (lower-case names); others pass unchecked. */
  headers?: z.ZodType;
}

type Parsed<S extends RequestSchema> = {
  [K in keyof S]: S[K] extends z.ZodType ? z.output<S[K]> : never;
};

/**
 * A query string's `name[key]=value` parameters (OpenAPI's deepObject style) as the object
 * `name: { key: value }`; the query parser leaves them flat. Other parameters pass as they are.
 */
function deepObjectQuery(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    const nested = /^([^[\]]+)\[([^[\]]+)\]$/.exec(name);
    if (!nested) {
      out[name] = value;
      continue;
    }
    const [, outer, key] = nested as unknown as [string, string, string];
    const object = out[outer];
    out[outer] = { ...(typeof object === 'object' && object !== null ? object : {}), [key]: value };
  }
  return out;
}

/** Validates a request against its route's schemas; every problem is listed in `details`. */
export function parse<S extends RequestSchema>(schema: S, req: Request): Parsed<S> {
  const out: Record<string, unknown> = {};
  const details: { path: string; message: string }[] = [];
  for (const part of ['params', 'query', 'headers', 'body'] as const) {
    const partSchema = schema[part];
    if (!partSchema) continue;
    const input = part === 'query' ? deepObjectQuery(req.query as Record<string, unknown>) : req[part];
    const result = partSchema.safeParse(input ?? {});
    if (result.success) out[part] = result.data;
    else
      for (const issue of result.error.issues)
        details.push({ path: [part, ...issue.path.map(String)].join('.'), message: issue.message });
  }
  if (details.length) throw new ValidationError(details);
  return out as Parsed<S>;
}
