import { z } from 'zod';

/** An idempotency key: 1–255 visible ASCII characters, as Stripe takes it (a UUID, say). */
export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters');
