import { lookup } from 'node:dns/promises';
import type { Config } from '../config/config';
import type { ErrorDetail } from '../errors/app-error';
import { isPublicAddress, literalAddress } from '../net/address-policy';

/** A name server that does not answer must not hold a management request for long. */
const RESOLVE_TIMEOUT_MS = 5_000;

async function resolveAll(hostname: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), RESOLVE_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout]);
    return found.map((a) => a.address);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why a webhook URL is refused at registration, as `details` entries (empty when it is fine).
 * This is an early, friendly answer only: the outbound client checks every address again at
 * connect time, so a name that later resolves elsewhere still cannot reach a private network.
 */
export async function webhookUrlProblems(raw: string, config: Config): Promise<ErrorDetail[]> {
  const problem = (message: string): ErrorDetail[] => [{ path: 'body.url', message }];
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && config.ALLOW_INSECURE_WEBHOOKS)) {
    return problem('must be an https URL');
  }
  // The URL is shown in every list: credentials in it would be a secret outside the secret field.
  if (url.username || url.password) return problem('must not contain a user name or password');
  if (config.ALLOW_PRIVATE_NETWORK_URLS) return [];

  const literal = literalAddress(url.hostname);
  if (literal !== undefined) {
    return isPublicAddress(literal)
      ? []
      : problem('must not point at a private, loopback or link-local address');
  }
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname);
  } catch {
    return problem('host name does not resolve');
  }
  if (addresses.length === 0) return problem('host name does not resolve');
  return addresses.every(isPublicAddress)
    ? []
    : problem('host name resolves to a private, loopback or link-local address');
}
