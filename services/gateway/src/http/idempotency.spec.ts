/**
 * The Idempotency-Key header's checks and what a key's scope and body hash are made of.
 */
import type { Request } from 'express';
import type { Problem } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { bodyHashOf, canonicalJson, idempotencyKeyOf, isKept, keptHeaders, scopeOf } from './idempotency.js';

const req = (value?: string | string[]) => ({ headers: value === undefined ? {} : { 'idempotency-key': value } }) as unknown as Request;

describe('Idempotency-Key', () => {
  it('takes 1 to 255 printable ASCII characters and locates anything else at the header', () => {
    const problems: Problem[] = [];
    expect(idempotencyKeyOf(req(), problems)).toBeUndefined();
    expect(idempotencyKeyOf(req('publish-7f3a ~!'), problems)).toBe('publish-7f3a ~!');
    expect(idempotencyKeyOf(req('k'.repeat(255)), problems)).toBe('k'.repeat(255));
    expect(problems).toEqual([]);
    for (const bad of ['', 'k'.repeat(256), 'clé', 'tab\there', 'nul\u0000']) {
      const found: Problem[] = [];
      expect(idempotencyKeyOf(req(bad), found)).toBeUndefined();
      expect(found).toEqual([expect.objectContaining({ loc: ['header', 'idempotency-key'] })]);
    }
  });

  it('hashes the body canonically: key order does not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    expect(bodyHashOf({ a: 1, b: { c: 2, d: 3 } }, {})).toBe(bodyHashOf({ b: { d: 3, c: 2 }, a: 1 }, {}));
    expect(bodyHashOf({ a: 1 }, {})).not.toBe(bodyHashOf({ a: 2 }, {}));
    expect(bodyHashOf({ a: 1 }, {})).not.toBe(bodyHashOf({ a: 1 }, { dry_run: 'true' }));
    expect(bodyHashOf(undefined, undefined)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('scopes a key by principal, method and concrete path', () => {
    const base = scopeOf('user:a', 'post', '/entities/Shot', 'k');
    expect(scopeOf('user:a', 'POST', '/entities/Shot', 'k')).toBe(base);
    expect(scopeOf('user:b', 'POST', '/entities/Shot', 'k')).not.toBe(base);
    expect(scopeOf('user:a', 'POST', '/entities/Asset', 'k')).not.toBe(base);
    expect(scopeOf('user:a', 'POST', '/entities/Shot', 'k2')).not.toBe(base);
  });

  it('keeps every answer below 500 but 429, and only the headers worth repeating', () => {
    expect([200, 201, 403, 404, 409, 422].every(isKept)).toBe(true);
    expect([429, 500, 503].some(isKept)).toBe(false);
    expect(keptHeaders({ ETag: '"x"', 'Set-Cookie': 'a', 'x-request-id': 'r' })).toEqual({ etag: '"x"' });
  });
});
