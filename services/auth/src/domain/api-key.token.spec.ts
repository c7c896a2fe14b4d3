import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, isApiKeyToken, sameHash } from './api-key.token.js';

describe('API key tokens', () => {
  it('are svc_ + 32 random bytes in base64url, with a 12-character display prefix', () => {
    const k = generateApiKey();
    expect(k.token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(k.token.slice(4), 'base64url')).toHaveLength(32);
    expect(k.prefix).toBe(k.token.slice(0, 12));
    expect(isApiKeyToken(k.token)).toBe(true);
    expect(isApiKeyToken('eyJhbGciOiJFUzI1NiJ9.x.y')).toBe(false);
  });

  it('store the sha256 hex of the whole token, never the token', () => {
    const k = generateApiKey();
    expect(k.hash).toBe(createHash('sha256').update(k.token).digest('hex'));
    expect(k.hash).toBe(hashApiKey(k.token));
    expect(k.hash).not.toContain(k.token.slice(4));
  });

  it('are unique', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => generateApiKey().token));
    expect(tokens.size).toBe(200);
  });

  it('compare hashes exactly', () => {
    const h = hashApiKey('svc_a');
    expect(sameHash(h, hashApiKey('svc_a'))).toBe(true);
    expect(sameHash(h, hashApiKey('svc_b'))).toBe(false);
    expect(sameHash(h, h.slice(0, 10))).toBe(false);
  });
});
