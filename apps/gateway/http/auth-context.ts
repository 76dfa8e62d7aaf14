import type { Request } from 'express';
import { UnauthorizedError } from '../../../core/errors/app-error';
import { addLogContext } from '../../../core/logging/context';
import type { Caller } from '../../../operations/deps';

const CALLER = Symbol('caller');
const CHECK = Symbol('check');
type WithCaller = Request & { [CALLER]?: Caller; [CHECK]?: Promise<unknown> };

export function setAuth(req: Request, caller: Caller): void {
  (req as WithCaller)[CALLER] = caller;
  addLogContext({ userId: caller.userId });
}

/**
 * The caller as this gateway remembers its key, while the key's check runs beside the route's read
 * (see apiKeyGuard): the answer waits for `check` and is its refusal if it fails.
 */
export function setRememberedAuth(req: Request, caller: Caller, check: Promise<unknown>): void {
  // Awaited by settleAuth; until then a failure must not count as unhandled.
  check.catch(() => undefined);
  (req as WithCaller)[CHECK] = check;
  setAuth(req, caller);
}

/** Waits for a key check still running beside the route (setRememberedAuth); throws its refusal. */
export async function settleAuth(req: Request): Promise<void> {
  await (req as WithCaller)[CHECK];
}

/** The caller of a guarded route (set by the apiKey or session guard); a route without one gets 401. */
export function currentAuth(req: Request): Caller {
  const caller = (req as WithCaller)[CALLER];
  if (!caller) throw new UnauthorizedError();
  return caller;
}
