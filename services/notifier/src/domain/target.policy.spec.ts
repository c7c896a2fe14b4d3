import { describe, expect, it } from 'vitest';
import { blockedAddressReason, checkTarget, parseTargetUrl } from './target.policy.js';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'unique-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback (embedded IPv4)'],
    ['::ffff:7f00:1', 'loopback (embedded IPv4)'],
    ['::ffff:10.0.0.1', 'private (embedded IPv4)'],
    ['64:ff9b::a9fe:a9fe', 'link-local (embedded IPv4)'],
    ['2002:c0a8:0101::1', 'private (6to4)'],
    ['not-an-ip', 'not an IP address'],
  ])('%s is refused (%s)', (ip, why) => {
    expect(blockedAddressReason(ip)).toBe(why);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:0808:0808::1'])('%s is public', (ip) => {
    expect(blockedAddressReason(ip)).toBeNull();
  });
});

describe('parseTargetUrl', () => {
  it('refuses other schemes, credentials and relative URLs', () => {
    expect(parseTargetUrl('ftp://example.com/x')).toMatch(/http or https/);
    expect(parseTargetUrl('https://user:pw@example.com/x')).toMatch(/user name or password/);
    expect(parseTargetUrl('/hooks')).toMatch(/absolute/);
    expect(parseTargetUrl('http://[::1]:8080/x')).toMatchObject({ host: '::1' });
  });
});

describe('checkTarget', () => {
  const resolver = (map: Record<string, string[]>) => async (host: string) => {
    const a = map[host];
    if (!a) throw new Error('ENOTFOUND');
    return a;
  };

  it('refuses a host when any address it resolves to is not public', async () => {
    const r = resolver({ 'hooks.example.com': ['93.184.216.34'], 'evil.example.com': ['93.184.216.34', '10.0.0.5'], localhost: ['127.0.0.1'] });
    expect(await checkTarget('https://hooks.example.com/in', r, false)).toBeNull();
    expect(await checkTarget('https://evil.example.com/in', r, false)).toMatch(/10\.0\.0\.5 is private/);
    expect(await checkTarget('http://localhost:9000/', r, false)).toMatch(/loopback/);
    expect(await checkTarget('http://127.0.0.1:9000/', r, false)).toMatch(/loopback/);
    expect(await checkTarget('http://[::ffff:169.254.169.254]/', r, false)).toMatch(/link-local/);
    expect(await checkTarget('http://nowhere.example.com/', r, false)).toMatch(/does not resolve/);
  });

  it('allows private targets only when configured, and still checks the form', async () => {
    const r = resolver({});
    expect(await checkTarget('http://127.0.0.1:9000/', r, true)).toBeNull();
    expect(await checkTarget('file:///etc/passwd', r, true)).toMatch(/http or https/);
  });
});
