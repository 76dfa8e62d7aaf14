import { AppError } from '../errors/app-error';

/**
 * A cookie-authenticated write must come from our own origin: Sec-Fetch-Site, else Origin, must
 * not say cross-site (every transport that takes the session cookie checks it).
 */
export function assertSameOrigin(
  headers: Record<string, string | string[] | undefined>,
  protocol: string,
  host: string | undefined,
): void {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string') {
    if (site === 'same-origin' || site === 'none') return;
    throw new AppError('FORBIDDEN', 'Cross-site requests are refused.');
  }
  const origin = headers.origin;
  if (typeof origin !== 'string') return; // not a browser: no ambient-cookie risk to guard against
  if (host && origin === `${protocol}://${host}`) return;
  throw new AppError('FORBIDDEN', 'Cross-site requests are refused.');
}
