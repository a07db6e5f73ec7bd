/**
 * Which addresses the proxy refuses to connect to, whatever name led there: the default
 * `blockAddress` predicate. Pure.
 *
 * An allowed name may resolve to an internal address (a record pointing at the cloud metadata
 * service, at loopback, or rebinding there after a first harmless answer). The proxy therefore
 * resolves every destination itself, checks each address with `blockAddress` and connects to the
 * checked address (never resolving twice). The default refuses what no agent should reach through
 * a name or an address:
 * - link-local 169.254.0.0/16 and fe80::/10 (the metadata services live there) and AWS's IPv6
 *   metadata address fd00:ec2::254;
 * - "this network" 0.0.0.0/8 and the unspecified ::;
 * - loopback 127.0.0.0/8 and ::1 (the proxy's own host);
 * - multicast 224.0.0.0/4 and ff00::/8, and broadcast 255.255.255.255;
 * - the same IPv4 addresses written as IPv4-mapped IPv6 (::ffff:127.0.0.1).
 * Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) pass: cluster services live there.
 * @module
 */
import { isIP } from 'node:net';

/** The default `blockAddress`: true for link-local, metadata, loopback, unspecified and multicast addresses. */
export function defaultBlockAddress(ip: string): boolean {
  const address = ip.replace(/%.*$/, ''); // an IPv6 zone id
  switch (isIP(address)) {
    case 4:
      return blockedV4(ipv4Octets(address));
    case 6:
      return blockedV6(ipv6Groups(address));
    default:
      return true; // not an address: nothing to connect to
  }
}

function blockedV4([a, b]: readonly number[]): boolean {
  return a === 0 || a === 127 || (a === 169 && b === 254) || a! >= 224; // 224/4 multicast, 240/4 reserved and broadcast
}

function blockedV6(g: readonly number[]): boolean {
  const zeroTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return true; // ::
  if (zeroTo(7) && g[7] === 1) return true; // ::1
  if (zeroTo(5) && g[5] === 0xffff) return blockedV4([g[6]! >> 8, g[6]! & 0xff]); // ::ffff:a.b.c.d
  if ((g[0]! & 0xffc0) === 0xfe80) return true; // fe80::/10
  if ((g[0]! & 0xff00) === 0xff00) return true; // ff00::/8
  return g[0] === 0xfd00 && g[1] === 0x0ec2 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0 && g[6] === 0 && g[7] === 0x254;
}

function ipv4Octets(address: string): number[] {
  return address.split('.').map(Number);
}

/** The eight 16-bit groups of a valid IPv6 text (with `::` and an IPv4 tail expanded). */
function ipv6Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const parse = (part: string): number[] =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a = 0, b = 0, c = 0, d = 0] = ipv4Octets(g);
          return [(a << 8) | b, (c << 8) | d];
        });
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
