import type { Request } from 'express';
import { UnauthorizedError } from '../../../core/errors/app-error';
import { addLogContext } from '../../../core/logging/context';
import type { Caller } from '../../../operations/deps';

const CALLER = Symbol('caller');
type WithCaller = Request & { [CALLER]?: Caller };

export function setAuth(req: Request, caller: Caller): void {
  (req as WithCaller)[CALLER] = caller;
  addLogContext({ userId: caller.userId });
}

/** The caller of a guarded route (set by the apiKey or session guard); a route without one gets 401. */
export function currentAuth(req: Request): Caller {
  const caller = (req as WithCaller)[CALLER];
  if (!caller) throw new UnauthorizedError();
  return caller;
}
