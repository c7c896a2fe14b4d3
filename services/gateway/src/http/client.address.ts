/**
 * The client address a request comes from, for limits kept per client. With
 * TRUST_PROXY_HOPS = n the n right-most `X-Forwarded-For` hops are trusted proxies and the
 * address before them is the client; with 0 (the default) the socket's peer is the client
 * and `X-Forwarded-For` is ignored, so a client cannot pick its own bucket.
 */
import type { IncomingMessage } from 'node:http';

const UNKNOWN = 'unknown';

/** `::ffff:1.2.3.4` → `1.2.3.4`, so one client has one key over IPv4 and mapped IPv6. */
function normalise(addr: string): string {
  const a = addr.trim();
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a.toLowerCase();
}

export function clientAddress(req: IncomingMessage, trustedHops: number): string {
  const peer = req.socket?.remoteAddress ? normalise(req.socket.remoteAddress) : UNKNOWN;
  if (trustedHops <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  // The chain as the last trusted proxy saw it: client, proxies…, then the socket's peer.
  const hops = [...raw.split(',').map((s) => s.trim()).filter(Boolean), peer];
  const index = hops.length - 1 - trustedHops;
  return normalise(hops[Math.max(index, 0)] ?? peer) || UNKNOWN;
}
