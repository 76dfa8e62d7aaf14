import type { Config } from '../config/config';
import type { GuardedHttp } from './guarded-http';

/** Builds the SSRF-guarded outbound client. */
export function createGuardedHttp(_config: Config): GuardedHttp {
  return { request: () => Promise.reject(new Error('guarded HTTP client is not built yet')) };
}
