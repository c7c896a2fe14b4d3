/**
 * Which webhook targets are allowed (docs/notifier.md, "Target checks"): http or https URLs
 * without credentials whose host resolves only to public addresses. Loopback, private,
 * link-local, unique-local, CGNAT, multicast, reserved and unspecified addresses, and IPv6
 * forms that embed one of those (IPv4-mapped, IPv4-compatible, NAT64, 6to4), are refused,
 * unless private targets are allowed by configuration. The same address check runs again at
 * delivery time on the address actually connected to.
 */
import { BlockList, isIP } from 'node:net';

const V4_BLOCKED: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_BLOCKED: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'documentation'],
  ['100::', 64, 'discard'],
];

const v4Lists = V4_BLOCKED.map(([net, prefix, why]) => {
  const l = new BlockList();
  l.addSubnet(net, prefix, 'ipv4');
  return [l, why] as const;
});
const v6Lists = V6_BLOCKED.map(([net, prefix, why]) => {
  const l = new BlockList();
  l.addSubnet(net, prefix, 'ipv6');
  return [l, why] as const;
});

/** The 8 groups of an IPv6 address as numbers (handles `::` and a dotted IPv4 tail). */
function v6Groups(ip: string): number[] {
  let s = ip.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const [a, b, c, d] = tail[1]!.split('.').map(Number) as [number, number, number, number];
    s = s.slice(0, -tail[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const fill = rest === undefined ? [] : Array<string>(8 - h.length - r.length).fill('0');
  return [...h, ...fill, ...r].map((g) => parseInt(g, 16));
}

/** The IPv4 address embedded in groups 6 and 7. */
function v4From(g: number[]): string {
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

/**
 * Why `ip` must not be a webhook target, or null when it is a public address. Anything that
 * is not an IP address at all is refused too.
 */
export function blockedAddressReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) {
    if (ip === '255.255.255.255') return 'broadcast';
    for (const [l, why] of v4Lists) if (l.check(ip, 'ipv4')) return why;
    return null;
  }
  if (family !== 6) return 'not an IP address';
  const bare = ip.split('%')[0]!;
  for (const [l, why] of v6Lists) if (l.check(bare, 'ipv6')) return why;
  const g = v6Groups(bare);
  const zero5 = g.slice(0, 5).every((x) => x === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64).
  const mapped = zero5 && g[5] === 0xffff;
  const compatible = zero5 && g[5] === 0;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (mapped || compatible || nat64) {
    const inner = blockedAddressReason(v4From(g));
    return inner ? `${inner} (embedded IPv4)` : null;
  }
  // 2002:AABB:CCDD::/48 (6to4) carries the IPv4 address in groups 1 and 2.
  if (g[0] === 0x2002) {
    const inner = blockedAddressReason(`${g[1]! >> 8}.${g[1]! & 255}.${g[2]! >> 8}.${g[2]! & 255}`);
    return inner ? `${inner} (6to4)` : null;
  }
  return null;
}

/** A webhook URL that passed the syntactic checks. */
export interface TargetUrl {
  url: URL;
  /** The host without IPv6 brackets. */
  host: string;
}

/** Checks the form of `raw`: absolute http(s) URL, no user or password, a host; a message when not. */
export function parseTargetUrl(raw: string): TargetUrl | string {
  if (raw.length > 2048) return 'the URL is longer than 2048 characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'the URL must use http or https';
  if (url.username || url.password) return 'the URL must not carry a user name or password';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) return 'the URL has no host';
  return { url, host };
}

/** Resolves a host name to every address it has (the DNS adapter, or a stand-in in tests). */
export type HostResolver = (host: string) => Promise<string[]>;

/**
 * The full check made when a webhook is created or its URL changed: the form, then every
 * address the host resolves to (an IP literal is its own address). Returns a message for
 * the `url` problem, or null when allowed.
 */
export async function checkTarget(raw: string, resolve: HostResolver, allowPrivate: boolean): Promise<string | null> {
  const parsed = parseTargetUrl(raw);
  if (typeof parsed === 'string') return parsed;
  if (allowPrivate) return null;
  let addresses: string[];
  if (isIP(parsed.host)) addresses = [parsed.host];
  else {
    try {
      addresses = await resolve(parsed.host);
    } catch {
      return `the host ${parsed.host} does not resolve`;
    }
    if (addresses.length === 0) return `the host ${parsed.host} does not resolve`;
  }
  for (const a of addresses) {
    const why = blockedAddressReason(a);
    if (why) return `the target address ${a} is ${why}; webhooks may only call public addresses`;
  }
  return null;
}
