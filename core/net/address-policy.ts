import ipaddr from 'ipaddr.js';

/**
 * Cloud metadata services, named even though their ranges (link-local, unique-local) are refused
 * anyway: a future loosening of the range rule must not open them.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/**
 * `::a.b.c.d` (::/96, "IPv4-compatible", deprecated by RFC 4291): ipaddr.js names no range for it,
 * so `[::7f00:1]` would pass as unicast, yet some stacks still reach the IPv4 address inside. No
 * public service is reached that way, so the whole block is refused.
 */
function isIpv4Compatible(bytes: number[]): boolean {
  return bytes.slice(0, 12).every((b) => b === 0);
}

/**
 * True when an address may receive a request built from user input. Only plain public unicast
 * passes: ipaddr.js names every special range (loopback, private, link-local, carrier-grade NAT,
 * multicast, reserved, unspecified, broadcast, unique-local, 6to4, Teredo, NAT64…), and any named
 * range is refused. An IPv4-mapped IPv6 address is judged by the IPv4 address inside it.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address.replace(/^\[|\]$/g, '').split('%')[0] ?? '');
  if (METADATA_ADDRESSES.has(parsed.toString())) return false;
  if (parsed.kind() === 'ipv6' && isIpv4Compatible(parsed.toByteArray())) return false;
  return parsed.range() === 'unicast';
}

/** The address inside a URL host, without IPv6 brackets, when the host is a literal address. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(bare) ? bare : undefined;
}
