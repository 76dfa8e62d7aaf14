import { z } from 'zod';
import type { ErrorCode } from '../../../core/errors/app-error';
import { idempotencyKeySchema } from '../../../core/schemas/idempotency';
import { IDEMPOTENT_REPLAYED_HEADER, type Replayable } from '../../../operations/idempotency';
import type { RouteResult } from './route-table';

/**
 * `Idempotency-Key`: 1–255 visible ASCII characters, as Stripe takes it; the IETF draft's quoted
 * form (`"…"`, a structured-field string) is read as the same key without its quotes. Only a
 * quoted non-empty key is unquoted: `""` is a two-character key, so every value the documented
 * pattern takes is a key the server takes.
 */
export const idempotencyHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .transform((v) => v.trim().replace(/^"(.+)"$/, '$1'))
    .pipe(idempotencyKeySchema)
    .optional()
    .openapi({
      description:
        'Makes a retry safe: the first answer to this key is kept 24 hours and replayed to any retry of the same request (header `Idempotent-Replayed: true`), which is not run, charged or announced again. Per user; 1–255 visible ASCII characters, e.g. a UUID.',
      example: '6f1c9a2e-8d4b-4c3e-9f7a-2b5d8e1c4a90',
      // The transform hides the rule from the document generator: say it here.
      type: 'string',
      pattern: '^[!-~]{1,255}$',
    }),
});

/** The codes a route that takes an `Idempotency-Key` can answer because of it. */
export const IDEMPOTENCY_ERRORS: ErrorCode[] = ['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED'];

/** Documents `Idempotent-Replayed` on a route's success answer. */
export const replayedHeaderSchema = z.object({
  [IDEMPOTENT_REPLAYED_HEADER]: z
    .literal('true')
    .optional()
    .openapi({ description: 'Set when this is the stored first answer to the same Idempotency-Key.' }),
});

/** A route's success answer, marked when it is the stored first answer to the same key. */
export function replayable(status: number, answer: Replayable<unknown>): RouteResult {
  return {
    status,
    body: answer.value,
    ...(answer.replayed ? { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } } : {}),
  };
}
