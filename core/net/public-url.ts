import { lookup } from 'node:dns/promises';
import type { Config } from '../config/config';
import { isPublicAddress, literalAddress } from './address-policy';

/** A name server that does not answer must not hold a request for long. */
const RESOLVE_TIMEOUT_MS = 5_000;

/**
 * What a client is told when a URL it gave may not be reached, whatever the reason: telling
 * "resolves to a private address" from "does not resolve" would let it map the internal names.
 */
export const NOT_PUBLIC_MESSAGE = 'must point at a public address';

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
 * Why a user's URL is refused when it is given (undefined when it may be fetched), for the log
 * only; the client gets NOT_PUBLIC_MESSAGE. An early answer: the outbound client checks every
 * address again at connect time, so a name that later resolves elsewhere still cannot reach a
 * private network.
 */
export async function hostRefusal(url: URL, config: Config): Promise<string | undefined> {
  if (config.ALLOW_PRIVATE_NETWORK_URLS) return undefined;
  const literal = literalAddress(url.hostname);
  if (literal !== undefined) return isPublicAddress(literal) ? undefined : 'private address';
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname);
  } catch {
    return 'does not resolve';
  }
  if (addresses.length === 0) return 'does not resolve';
  return addresses.every(isPublicAddress) ? undefined : 'resolves to a private address';
}
