/**
 * The Idempotency-Key header's checks and what a key's scope and body hash are made of.
 */
import type { Request } from 'express';
import { AppError, canonicalJson, type CallContext, type Problem } from '@reelbase/lib-platform';
import { idempotencyv1 } from '@reelbase/proto';
import { describe, expect, it } from 'vitest';
import {
  bodyHashOf,
  claimKey,
  idempotencyKeyOf,
  isKept,
  KeyWaiters,
  keptHeaders,
  MAX_WAITERS_PER_KEY,
  principalOf,
  scopeOf,
  type IdempotencyClient,
} from './idempotency.js';

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

const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;
const ctx: CallContext = { requestId: 'r' };

/** A key store that answers every claim with `outcome`, counting the claims. */
function storeAnswering(outcome: idempotencyv1.IdempotencyServiceClaimResponse_Outcome, retryAfterMs = 0) {
  const seen: idempotencyv1.IdempotencyServiceClaimRequest[] = [];
  const client = {
    claim: async (req: idempotencyv1.IdempotencyServiceClaimRequest) => {
      seen.push(req);
      return { outcome, claim: '', retryAfterMs };
    },
  } as unknown as IdempotencyClient;
  return { client, seen };
}

describe('claiming a key', () => {
  const want = { scope: 'a'.repeat(64), bodyHash: 'b'.repeat(64), principal: principalOf('u1', '/entities/Shot'), maxKeys: 10 };

  it('counts keys per user, and per share link for guests', () => {
    expect(principalOf('u1', '/x')).toBe('user:u1');
    expect(principalOf(undefined, '/shared/t1/notes')).toMatch(/^link:[0-9a-f]{64}$/);
    expect(principalOf(undefined, '/shared/t1/notes')).not.toBe(principalOf(undefined, '/shared/t2/notes'));
  });

  it('a new key past the principal’s live keys is 429 with the wait until its oldest expires', async () => {
    const { client, seen } = storeAnswering(Outcome.OUTCOME_LIMITED, 90_500);
    const err = await claimKey(client, want, ctx, new KeyWaiters()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ kind: 'rate_limited', retryAfter: 91 });
    expect(seen[0]).toMatchObject({ principal: 'user:u1', maxKeys: 10 });
  });

  it('at most a few repeats of one key in flight wait at once; the others are told at once, and the count goes back down', async () => {
    const { client, seen } = storeAnswering(Outcome.OUTCOME_IN_FLIGHT);
    const waiters = new KeyWaiters();
    const waiting = Array.from({ length: MAX_WAITERS_PER_KEY }, () => claimKey(client, want, ctx, waiters, 1500).catch((e: unknown) => e));
    // Each waiter has looked once and is asleep before it looks again.
    await new Promise((r) => setTimeout(r, 20));
    expect(waiters.size).toBe(1);
    const extra = await claimKey(client, want, ctx, waiters, 1500).catch((e: unknown) => e);
    expect(extra).toMatchObject({ kind: 'conflict', code: 'idempotency_in_progress' });
    // Another key is not held back by this one.
    const other = claimKey(client, { ...want, scope: 'c'.repeat(64) }, ctx, waiters, 150).catch((e: unknown) => e);
    for (const err of await Promise.all([...waiting, other])) expect(err).toMatchObject({ code: 'idempotency_in_progress' });
    expect(waiters.size).toBe(0);
    // The waiters' looks back off: within 1.5 s each looks at most 5 times (pauses of 100, 200, 400, 800 ms).
    expect(seen.filter((r) => r.scope === want.scope).length).toBeLessThanOrEqual(MAX_WAITERS_PER_KEY * 5 + 1);
  });
});
