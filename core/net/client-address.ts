import ipaddr from 'ipaddr.js';

/**
 * The network around an IPv6 client: its /48, what a site (a home line, a small hoster) is
 * usually given, so the /64s of one site (addressBucket counts each as one client) share one
 * limit too. Undefined for IPv4, whose addresses are scarce enough to be counted one by one.
 */
export function addressNetwork(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.process(address);
  if (parsed.kind() !== 'ipv6') return undefined;
  const site = (parsed as ipaddr.IPv6).parts.slice(0, 3);
  return `${new ipaddr.IPv6([...site, 0, 0, 0, 0, 0]).toString()}/48`;
}

/** Whether a host the gateway listens on is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || (ipaddr.isValid(host) && ipaddr.process(host).range() === 'loopback');
}
