/**
 * The client address a request comes from, as the key of limits kept per client. With
 * TRUST_PROXY_HOPS = n the n right-most `X-Forwarded-For` hops are trusted proxies and the
 * address before them is the client; with 0 (the default) the socket's peer is the client
 * and `X-Forwarded-For` is ignored, so a client cannot pick its own bucket.
 */
import type { IncomingMessage } from 'node:http';

const UNKNOWN = 'unknown';

/** The eight hextets of an IPv6 address, or undefined when it is not one. */
function hextets(addr: string): string[] | undefined {
  if (!/^[0-9a-f:]+$/.test(addr) || addr.split('::').length > 2) return undefined;
  const [left = '', right] = addr.split('::') as [string, string?];
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const fill = right === undefined ? 0 : 8 - head.length - tail.length;
  const all = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail];
  return all.length === 8 && all.every((h) => h.length >= 1 && h.length <= 4) ? all : undefined;
}

/**
 * `::ffff:1.2.3.4` → `1.2.3.4`, so one client has one key over IPv4 and mapped IPv6; any other
 * IPv6 address → its /64 (`2001:db8:0:1::/64`): one host usually holds a whole /64, and must not
 * get a fresh bucket per address in it.
 */
function normalise(addr: string): string {
  const a = addr.trim().toLowerCase();
  if (a.startsWith('::ffff:') && a.includes('.')) return a.slice(7);
  const h = hextets(a);
  if (!h) return a;
  return `${h
    .slice(0, 4)
    .map((x) => x.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function clientAddress(req: IncomingMessage, trustedHops: number): string {
  const peer = req.socket?.remoteAddress ? normalise(req.socket.remoteAddress) : UNKNOWN;
  if (trustedHops <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  // The chain as the last trusted proxy saw it: client, proxies…, then the socket's peer.
  const hops = [
    ...raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    peer,
  ];
  const index = hops.length - 1 - trustedHops;
  return normalise(hops[Math.max(index, 0)] ?? peer) || UNKNOWN;
}
