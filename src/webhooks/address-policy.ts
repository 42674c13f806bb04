import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: this host,
 * private networks, link-local ranges (cloud metadata services at 169.254.169.254 and
 * fd00:ec2::254 included), and ranges that are not unicast on the internet. IPv4-mapped IPv6
 * addresses (::ffff:a.b.c.d) are judged by their IPv4 address (BlockList does so itself).
 */
const BLOCKED_IPV4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

const BLOCKED_IPV6: readonly (readonly [string, number])[] = [
  ['::', 127],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const blocked = new BlockList();
for (const [net, prefix] of BLOCKED_IPV4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of BLOCKED_IPV6) blocked.addSubnet(net, prefix, 'ipv6');

/** The well-known NAT64 prefix carries an IPv4 address in its last 32 bits: judged by that. */
const NAT64 = /^64:ff9b::(?:([0-9a-f]{1,4}):([0-9a-f]{1,4})|(\d+\.\d+\.\d+\.\d+))$/i;

/** True for an address a webhook must not reach (see above); anything that is not an IP address counts as blocked. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const nat64 = NAT64.exec(address);
  if (nat64) {
    const v4 = nat64[3] ?? hexPairToIpv4(nat64[1] ?? '0', nat64[2] ?? '0');
    return blocked.check(v4, 'ipv4');
  }
  return blocked.check(address, 'ipv6');
}

function hexPairToIpv4(high: string, low: string): string {
  const h = parseInt(high, 16);
  const l = parseInt(low, 16);
  return [h >> 8, h & 0xff, l >> 8, l & 0xff].join('.');
}
