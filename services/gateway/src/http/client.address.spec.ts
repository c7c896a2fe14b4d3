import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress } from './client.address.js';

const req = (remoteAddress: string, xff?: string) =>
  ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  it('is the peer address unless proxies are trusted; mapped IPv4 is plain IPv4', () => {
    expect(clientAddress(req('::ffff:10.0.0.7', '1.2.3.4'), 0)).toBe('10.0.0.7');
    expect(clientAddress(req('10.0.0.7'), 0)).toBe('10.0.0.7');
  });

  it('with n trusted hops takes the entry the outermost trusted proxy added; a client cannot prepend its own', () => {
    expect(clientAddress(req('10.0.0.2', '203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientAddress(req('10.0.0.2', '6.6.6.6, 203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientAddress(req('10.0.0.2', '6.6.6.6, 203.0.113.9, 10.0.0.3'), 2)).toBe('203.0.113.9');
    // Fewer entries than trusted hops: the left-most there is.
    expect(clientAddress(req('10.0.0.2'), 1)).toBe('10.0.0.2');
  });

  it('groups IPv6 clients by /64', () => {
    expect(clientAddress(req('2001:db8:0:1::5'), 0)).toBe('2001:db8:0:1::/64');
    expect(clientAddress(req('2001:0db8:0000:0001:ffff:1:2:3'), 0)).toBe('2001:db8:0:1::/64');
    expect(clientAddress(req('::1'), 0)).toBe('0:0:0:0::/64');
  });
});
