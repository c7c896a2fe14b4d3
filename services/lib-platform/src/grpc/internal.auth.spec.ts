import { createHmac, randomBytes } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { toMetadata, type CallContext } from '../context.js';
import { HmacSha256, INTERNAL_AUTH_KEY, INTERNAL_AUTH_TTL_MS, InternalAuth, isInternalAuthSecret, requestDigest, STREAM_BODY } from './internal.auth.js';

const SECRET = 'unit-test-internal-auth-secret-0123456789ab';
const PATH = '/reelbase.records.v1.RecordsService/CreateRecord';
const ctx: CallContext = {
  requestId: 'r-1',
  principal: { userId: 'u-1', role: 'Artist', authKind: 'api_key', apiKeyId: 'k-1', guestName: 'Zoë' },
};

const BODY = Buffer.from('the request as it travels');
const DIGEST = requestDigest(BODY);

function signed(at = 1_000_000, c: CallContext = ctx, body: Uint8Array | typeof STREAM_BODY = BODY): Metadata {
  const md = toMetadata(c);
  new InternalAuth(SECRET, () => at).sign(md, PATH, body);
  return md;
}

describe('HmacSha256', () => {
  it.each([0, 1, 32, 63, 64, 65, 200])('equals createHmac for a %i-byte key', (len) => {
    const key = randomBytes(len);
    for (const message of ['', 'a', 'Zoë Müller', 'x'.repeat(1000)]) {
      expect(new HmacSha256(key).digest(message).equals(createHmac('sha256', key).update(message, 'utf8').digest())).toBe(true);
    }
  });

  it('matches the RFC 4231 test case 2', () => {
    const mac = new HmacSha256(Buffer.from('Jefe')).digest('what do ya want for nothing?');
    expect(mac.toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});

describe('InternalAuth', () => {
  it('accepts its own assertion until it expires, and not after', () => {
    const md = signed();
    expect(String(md.get(INTERNAL_AUTH_KEY)[0])).toMatch(/^v2\.1015000\.[A-Za-z0-9_-]{13,}\.[A-Za-z0-9_-]{43}$/);
    expect(new InternalAuth(SECRET, () => 1_000_000).verify(md, PATH, DIGEST)).toBeNull();
    expect(new InternalAuth(SECRET, () => 1_000_000 + INTERNAL_AUTH_TTL_MS).verify(md, PATH, DIGEST)).toBeNull();
    expect(new InternalAuth(SECRET, () => 1_000_001 + INTERNAL_AUTH_TTL_MS).verify(md, PATH, DIGEST)).toBe('expired');
  });

  it('refuses an expiry too far ahead (a forged long-lived assertion)', () => {
    const md = signed(10_000_000);
    expect(new InternalAuth(SECRET, () => 1_000_000).verify(md, PATH, DIGEST)).toBe('expired');
  });

  it.each([
    ['x-principal-user', 'u-2'],
    ['x-principal-role', 'Admin'],
    ['x-principal-kind', 'service'],
    ['x-principal-api-key', 'k-2'],
    ['x-principal-guest', 'Other'],
    ['x-principal-via', 'media-transcode'],
    ['x-request-id', 'r-2'],
  ])('binds %s', (key, value) => {
    const md = signed();
    md.set(key, value);
    expect(new InternalAuth(SECRET, () => 1_000_000).verify(md, PATH, DIGEST)).toBe('bad signature');
  });

  it('binds added fields, repeated values and the method', () => {
    const auth = new InternalAuth(SECRET, () => 1_000_000);
    const noGuest = toMetadata({ requestId: 'r-1', principal: { userId: 'u-1', role: 'Artist', authKind: 'token' } });
    auth.sign(noGuest, PATH, BODY);
    noGuest.set('x-principal-guest', 'Mallory');
    expect(auth.verify(noGuest, PATH, DIGEST)).toBe('bad signature');
    const repeated = signed();
    repeated.add('x-principal-role', 'Admin');
    expect(auth.verify(repeated, PATH, DIGEST)).toBe('bad signature');
    expect(auth.verify(signed(), '/reelbase.records.v1.RecordsService/RetireRecord', DIGEST)).toBe('bad signature');
  });

  it('binds the request: the same assertion with another body is refused', () => {
    const auth = new InternalAuth(SECRET, () => 1_000_000);
    const other = requestDigest(Buffer.from('the request, changed'));
    expect(auth.verify(signed(), PATH, other)).toBe('bad signature');
    // A client stream's assertion covers no message, and is no unary call's.
    expect(auth.verify(signed(1_000_000, ctx, STREAM_BODY), PATH, DIGEST)).toBe('bad signature');
    expect(auth.verify(signed(1_000_000, ctx, STREAM_BODY), PATH, STREAM_BODY)).toBeNull();
    expect(auth.verify(signed(), PATH, STREAM_BODY)).toBe('bad signature');
  });

  it('takes each assertion once, and forgets its nonce once it expired', () => {
    let now = 1_000_000;
    const auth = new InternalAuth(SECRET, () => now);
    const md = signed();
    expect(auth.verify(md, PATH, DIGEST)).toBeNull();
    expect(auth.verify(md, PATH, DIGEST)).toBe('replayed');
    // A refused assertion (bad signature) leaves nothing behind; a fresh one is taken.
    expect(auth.verify(signed(), PATH, requestDigest(Buffer.from('x')))).toBe('bad signature');
    expect(auth.verify(signed(), PATH, DIGEST)).toBeNull();
    expect(auth.remembered).toBe(2);
    // Every nonce differs, even from one signer within one millisecond.
    const signer = new InternalAuth(SECRET, () => 1_000_000);
    const values = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const m = toMetadata(ctx);
      signer.sign(m, PATH, BODY);
      values.add(String(m.get(INTERNAL_AUTH_KEY)[0]).split('.')[2]!);
    }
    expect(values.size).toBe(1000);
    now += INTERNAL_AUTH_TTL_MS + 1;
    expect(auth.verify(signed(now), PATH, DIGEST)).toBeNull();
    expect(auth.remembered).toBe(1);
  });

  it('names what is wrong with a missing or malformed assertion', () => {
    const auth = new InternalAuth(SECRET, () => 1_000_000);
    expect(auth.verify(toMetadata(ctx), PATH, DIGEST)).toBe('missing');
    for (const bad of ['v2', 'v1.1015000.abc', 'v2.soon.n.abc', 'v2.1015000.abc', 'v2.1015000.n!.abc', 'v2.1015000.n.abc.def']) {
      const md = toMetadata(ctx);
      md.set(INTERNAL_AUTH_KEY, bad);
      expect(auth.verify(md, PATH, DIGEST), bad).toBe('malformed');
    }
    const twice = signed();
    twice.add(INTERNAL_AUTH_KEY, String(twice.get(INTERNAL_AUTH_KEY)[0]));
    expect(auth.verify(twice, PATH, DIGEST)).toBe('malformed');
    const truncated = signed();
    truncated.set(INTERNAL_AUTH_KEY, String(truncated.get(INTERNAL_AUTH_KEY)[0]).slice(0, -4));
    expect(auth.verify(truncated, PATH, DIGEST)).toBe('bad signature');
    const otherNonce = signed();
    const parts = String(otherNonce.get(INTERNAL_AUTH_KEY)[0]).split('.');
    otherNonce.set(INTERNAL_AUTH_KEY, [parts[0], parts[1], `${parts[2]}x`, parts[3]].join('.'));
    expect(auth.verify(otherNonce, PATH, DIGEST)).toBe('bad signature');
  });

  it('refuses another deployment’s assertion', () => {
    expect(new InternalAuth('x'.repeat(32), () => 1_000_000).verify(signed(), PATH, DIGEST)).toBe('bad signature');
  });

  it('wants a secret of at least 32 bytes', () => {
    expect(isInternalAuthSecret('x'.repeat(31))).toBe(false);
    expect(isInternalAuthSecret('x'.repeat(32))).toBe(true);
    expect(() => new InternalAuth('x'.repeat(31))).toThrow('INTERNAL_AUTH_SECRET must be at least 32 bytes');
  });

  it('signs a call without a principal as well', () => {
    const md = new Metadata();
    md.set('x-request-id', 'r-9');
    const auth = new InternalAuth(SECRET);
    auth.sign(md, PATH, BODY);
    expect(auth.verify(md, PATH, DIGEST)).toBeNull();
  });
});
