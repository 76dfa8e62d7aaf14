import type { Request } from 'express';
import { UnauthorizedError } from '../../../core/errors/app-error';

/** Who a request acts for; set by the apiKey or session guard. */
export interface AuthContext {
  userId: string;
  /** Set when authenticated by API key (public routes). */
  apiKeyId?: string;
  /** Set when authenticated by session cookie (management routes). */
  sessionId?: string;
}

const AUTH = Symbol('auth');
type WithAuth = Request & { [AUTH]?: AuthContext };

export function setAuth(req: Request, auth: AuthContext): void {
  (req as WithAuth)[AUTH] = auth;
}

/** The caller of a guarded route; a route without a guard has none and gets 401. */
export function currentAuth(req: Request): AuthContext {
  const auth = (req as WithAuth)[AUTH];
  if (!auth) throw new UnauthorizedError();
  return auth;
}
