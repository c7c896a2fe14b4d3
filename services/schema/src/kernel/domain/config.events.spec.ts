import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson as canonical } from '@reelbase/lib-platform';
import { configDigest, redacted, stringsOf } from './config.events.js';

describe('configuration events', () => {
  it('spells a value one way whatever its key order (absent keys left out)', () => {
    expect(canonical({ b: 1, a: [{ d: null, c: 'x' }] })).toBe('{"a":[{"c":"x","d":null}],"b":1}');
    expect(canonical({ a: 1, b: undefined })).toBe(canonical({ a: 1 }));
    expect(canonical('x')).toBe('"x"');
  });

  it('digests equal values alike and different values apart, keyed: no plain SHA-256 of the value, another key another digest', () => {
    const digest = configDigest(Buffer.alloc(32, 1));
    const target = { kind: 'webhook', url: 'https://hooks.example.com/T0/B0/abc' };
    expect(digest(target)).toMatch(/^[0-9a-f]{64}$/);
    expect(digest({ url: target.url, kind: 'webhook' })).toBe(digest(target));
    expect(digest({ ...target, url: 'https://hooks.example.com/T0/B0/abd' })).not.toBe(digest(target));
    // A reader who guesses the URL cannot confirm it by hashing it.
    expect(digest(target)).not.toBe(createHash('sha256').update(canonical(target)).digest('hex'));
    expect(configDigest(Buffer.alloc(32, 2))(target)).not.toBe(digest(target));
  });

  it('hides every occurrence of what it is told to, longest first, and leaves short strings alone', () => {
    const url = 'https://hooks.example.com/T0/B0/abc';
    expect(redacted(`POST ${url} failed (${url}); host hooks.example.com`, [url, 'hooks.example.com', 'abc'])).toBe(
      'POST [hidden] failed ([hidden]); host [hidden]',
    );
    expect(redacted('nothing to hide', [])).toBe('nothing to hide');
  });

  it('lists every string of a JSON value, keys included', () => {
    expect(stringsOf({ token: 'abc', nested: [{ k: 'v' }, 1, null] })).toEqual(['token', 'abc', 'nested', 'k', 'v']);
    expect(stringsOf(undefined)).toEqual([]);
  });
});
