import ipaddr from 'ipaddr.js';

/**
 * What a per-address limit counts a client address as: an IPv4 address (or one mapped into IPv6)
 * itself; an IPv6 address by its /64, which one subscriber is commonly handed whole, so that
 * stepping through the addresses of one network counts as one client, not 2^64 of them. A string
 * that is no address is counted as given.
 */
export function addressBucket(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const network = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...network, 0, 0, 0, 0]).toString()}/64`;
}
