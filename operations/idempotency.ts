import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { AppError, ERROR_STATUS, type ErrorCode } from '../core/errors/app-error';
import { canonicalHash, canonicalUuid } from '../core/hashing/canonical';
import {
  claimKey,
  releaseKey,
  storeOutcome,
  type KeyClaim,
  type KeyHolder,
  type StoredOutcome,
} from '../core/idempotency/store';
import type { Caller, OperationDeps } from './deps';

/** The header a replayed answer carries, success or error alike. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * One use of an Idempotency-Key: the key, when its claim began (a retry's is the same), and
 * whether this request took the claim over from a holder that died (only then can work exist).
 */
export interface KeyUse {
  key: string;
  since: Date;
  resumed: boolean;
}

/**
 * An id named by the user, the operation and this use of the key: work a first request began
 * before its answer was lost (its gateway died) is found again by the retry under the same id.
 */
export function keyedId(operation: string, userId: string, use: KeyUse): string {
  return canonicalUuid({ operation, userId, key: use.key, since: use.since.toISOString() });
}

/** An operation's answer, and whether it is the stored first answer to the same key. */
export interface Replayable<T> {
  value: T;
  replayed: boolean;
}

/** How often a request waiting on the same key's first request looks at it again. */
const WAIT_POLL_MS = 100;
/** A claim outlives the longest operation (a blocking tool call) by this much. */
const LEASE_MARGIN_MS = 60_000;

/**
 * Answers that are not stored, as Stripe does: they changed nothing (a request that fails leaves
 * nothing behind) and the request never began its work (400: it failed validation) or was told to
 * come back (409, 429: an active run or a limit; 5xx: a dependency down, or our bug). A retry with
 * the same key runs again rather than being told the same thing for 24 hours.
 */
function isRetryable(code: ErrorCode): boolean {
  const status = ERROR_STATUS[code];
  return status === 400 || status === 409 || status === 429 || status >= 500;
}

function toOutcome(err: unknown): StoredOutcome | null {
  if (!(err instanceof AppError) || isRetryable(err.code)) return null;
  return {
    ok: false,
    code: err.code,
    message: err.message,
    ...(err.details ? { details: err.details } : {}),
  };
}

function replay<T>(outcome: StoredOutcome): Replayable<T> {
  if (outcome.ok) return { value: outcome.value as T, replayed: true };
  throw new AppError(outcome.code as ErrorCode, outcome.message, outcome.details, {
    [IDEMPOTENT_REPLAYED_HEADER]: 'true',
  });
}

/**
 * Wraps an operation so that a request sent with an `Idempotency-Key` runs once per user and key:
 * the first answer is stored for 24 hours and every retry gets it back (`replayed`) without the
 * work being done, charged or announced again. The key is bound to the request it came with (the
 * operation and a hash of its canonical input): another request under the same key is refused
 * with IDEMPOTENCY_KEY_REUSED. A retry while the first is still running waits for it up to
 * IDEMPOTENCY_WAIT, then answers IDEMPOTENCY_IN_PROGRESS. Keys are the caller's own: another user's
 * key of the same name is another key. Any transport (REST, MCP) wraps the same way.
 */
export function idempotent<I, T>(
  deps: OperationDeps,
  operation: string,
  spec: {
    /** What makes two requests the same: the input as the operation reads it, files by their bytes. */
    fingerprint: (input: I) => unknown;
    /**
     * `keyed` names this use of the key (the same for a retry, new once the key was forgotten):
     * work that outlives a lost answer can be found again by it.
     */
    run: (caller: Caller, input: I, keyed?: KeyUse) => Promise<T>;
  },
): (caller: Caller, input: I, idempotencyKey?: string) => Promise<Replayable<T>> {
  const leaseMs = deps.config.TOOL_ROUTE_TIMEOUT + LEASE_MARGIN_MS;
  return async (caller, input, idempotencyKey) => {
    if (idempotencyKey === undefined) return { value: await spec.run(caller, input), replayed: false };
    let use: KeyUse | undefined;
    const claim: KeyClaim = {
      userId: caller.userId,
      key: idempotencyKey,
      operation,
      fingerprint: canonicalHash({ operation, input: await spec.fingerprint(input) }),
      owner: randomUUID(),
      leaseMs,
    };
    const deadline = Date.now() + deps.config.IDEMPOTENCY_WAIT;
    for (;;) {
      const holder = await claimKey(deps.db.pool, claim);
      if (holder && 'since' in holder) {
        use = { key: idempotencyKey, ...holder };
        break;
      }
      if (holder) {
        const outcome = settled(holder, claim);
        if (outcome) return replay<T>(outcome);
        if (Date.now() >= deadline)
          throw new AppError(
            'IDEMPOTENCY_IN_PROGRESS',
            'A request with this Idempotency-Key is still running; retry shortly.',
          );
        await delay(WAIT_POLL_MS);
      }
      // No holder: the key was let go, or expired, between the two looks; claim it again.
    }
    let value: T;
    try {
      value = await spec.run(caller, input, use);
    } catch (err) {
      const failed = toOutcome(err);
      if (failed) await storeOutcome(deps.db.pool, claim, failed);
      else
        await releaseKey(deps.db.pool, claim).catch((releaseErr: unknown) =>
          deps.logger.warn({ err: releaseErr }, 'idempotency key not released; its lease will free it'),
        );
      throw err;
    }
    await storeOutcome(deps.db.pool, claim, { ok: true, value });
    return { value, replayed: false };
  };
}

/** The holder's stored answer, null while it runs; another request under the key is refused. */
function settled(holder: KeyHolder, claim: KeyClaim): StoredOutcome | null {
  if (holder.fingerprint !== claim.fingerprint)
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different request; use a new key for a new request.',
    );
  return holder.outcome;
}
