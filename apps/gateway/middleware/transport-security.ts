import type { RequestHandler } from 'express';
import { publicBaseUrl, type Config } from '../../../core/config/config';

/** A year, as browsers' preload lists ask; renewed by every answer. */
const HSTS = 'max-age=31536000';

/**
 * When the public origin is https, every answer tells browsers to reach it over https only
 * (Strict-Transport-Security), so a later plain-http link or a network attacker's downgrade
 * cannot expose the session cookie or a signed file URL. Subdomains are not named: they are the
 * operator's, not necessarily ours. Over plain http (development) nothing is sent.
 */
export function transportSecurity(config: Config): RequestHandler | undefined {
  if (new URL(publicBaseUrl(config)).protocol !== 'https:') return undefined;
  return (_req, res, next) => {
    res.setHeader('strict-transport-security', HSTS);
    next();
  };
}
