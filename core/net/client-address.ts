import ipaddr from 'ipaddr.js';

/**
 * Who a per-address limit counts. An IPv4 address is one client. An IPv6 client is given a whole
 * /64 (the smallest prefix a network hands out; a host chooses its own last 64 bits, and privacy
 * extensions change them every day), so counting full IPv6 addresses would give one attacker
 * 2^64 fresh identities. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a dual-stack socket
 * shows an IPv4 peer) is its IPv4 address.
 */
export function clientBucket(address: string): string {
  const parsed = parsedAddress(address);
  if (!parsed) return address;
  return parsed.kind() === 'ipv4' ? parsed.toString() : prefixOf(parsed as ipaddr.IPv6, 64);
}

/**
 * The network around an IPv6 client: its /48, what a site (a home line, a small hoster) is
 * usually given, so a few hundred /64s cannot each take their own share of a limit. Undefined for
 * IPv4, whose addresses are scarce enough to be counted one by one.
 */
export function clientNetwork(address: string): string | undefined {
  const parsed = parsedAddress(address);
  return parsed?.kind() === 'ipv6' ? prefixOf(parsed as ipaddr.IPv6, 48) : undefined;
}

/** Whether the client is this machine (the embedded mode's own browser and scripts). */
export function isLoopback(address: string): boolean {
  return parsedAddress(address)?.range() === 'loopback';
}

function parsedAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  return ipaddr.isValid(bare) ? ipaddr.process(bare) : undefined;
}

function prefixOf(address: ipaddr.IPv6, bits: 48 | 64): string {
  const kept = address.parts.slice(0, bits / 16);
  const network = new ipaddr.IPv6([...kept, ...Array<number>(8 - kept.length).fill(0)]);
  return `${network.toString()}/${bits}`;
}
