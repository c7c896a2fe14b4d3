import { decodeProtectedHeader, SignJWT, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { nonCanonicalReason, P256_N } from './login-token.form.js';
import { LoginTokenIssuer } from './login-token.issuer.js';
import { SigningKeyRing } from './signing-key.ring.js';
import type { SigningKeyStore, StoredSigningKey } from './ports.js';

/** The same signature with S replaced by n - S: valid ECDSA, another spelling. */
function highSTwin(token: string): string {
  const [h, p, sig] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(sig, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  const twin = Buffer.concat([bytes.subarray(0, 32), Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex')]);
  return `${h}.${p}.${twin.toString('base64url')}`;
}

/** Newest first, like the repository; `clock` stands for the database's clock. */
class MemoryKeys implements SigningKeyStore {
  keys: Array<StoredSigningKey & { retiredAt?: number }> = [];
  loads = 0;
  constructor(private readonly clock: () => number = Date.now) {}
  async listUsable() {
    this.loads++;
    const now = this.clock();
    return this.keys
      .filter((k) => k.retiredAt === undefined || k.retiredAt > now)
      .map((k) => ({ ...k, retiresInMs: k.retiredAt === undefined ? null : k.retiredAt - now }))
      .reverse();
  }
  async rotate(key: StoredSigningKey, retireAfterMs: number) {
    const now = this.clock();
    let n = 0;
    for (const k of this.keys) {
      if (k.retiredAt !== undefined && k.retiredAt <= now) continue;
      k.retiredAt = Math.min(k.retiredAt ?? Infinity, now + retireAfterMs);
      n++;
    }
    this.keys.push(key);
    return n;
  }
  async ensureOne(generate: () => Promise<StoredSigningKey>) {
    if (this.keys.length === 0) this.keys.push(await generate());
  }
}

async function setup(now = () => Date.now()) {
  const store = new MemoryKeys(now);
  const ring = new SigningKeyRing(store, now, 3600);
  await ring.init();
  return { store, ring, issuer: new LoginTokenIssuer(ring, 'reelbase', 3600, now) };
}

describe('LoginTokenIssuer', () => {
  it('signs ES256 tokens with the kid and verifies them to the user id', async () => {
    const { store, issuer } = await setup();
    const { token, expiresIn } = await issuer.issue('user-1');
    expect(expiresIn).toBe(3600);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', kid: store.keys[0]!.kid });
    await expect(issuer.verify(token)).resolves.toBe('user-1');
  });

  it('rejects expired tokens, other issuers and tampered tokens as unauthenticated', async () => {
    let t = Date.now();
    const { ring, issuer } = await setup(() => t);
    const { token } = await issuer.issue('user-1');
    const tampered = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(issuer.verify(tampered)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(new LoginTokenIssuer(ring, 'someone-else', 3600, () => t).verify(token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(issuer.verify('not a token')).rejects.toMatchObject({ kind: 'unauthenticated' });
    t += 3601_000;
    await expect(issuer.verify(token)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('rejects a token signed by a key it does not hold, even with a known kid', async () => {
    const { store, issuer } = await setup();
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: store.keys[0]!.kid })
      .setSubject('admin')
      .setIssuer('reelbase')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    await expect(issuer.verify(forged)).rejects.toMatchObject({ kind: 'unauthenticated' });
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"admin","iss":"reelbase"}').toString('base64url')}.`;
    await expect(issuer.verify(unsigned)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('after rotation signs with the new key and still verifies old tokens', async () => {
    const { ring, issuer } = await setup();
    const old = await issuer.issue('user-1');
    const { kid, retired } = await ring.rotate();
    expect(retired).toBe(1);
    const fresh = await issuer.issue('user-2');
    expect(decodeProtectedHeader(fresh.token).kid).toBe(kid);
    expect(decodeProtectedHeader(old.token).kid).not.toBe(kid);
    await expect(issuer.verify(old.token)).resolves.toBe('user-1');
    await expect(issuer.verify(fresh.token)).resolves.toBe('user-2');
  });

  it('retires a rotated-out key once the longest token it signed has expired, on every replica', async () => {
    let t = 1_000_000;
    const { store, ring, issuer } = await setup(() => t);
    const other = new SigningKeyRing(store, () => t, 3600);
    await other.init();
    const oldKid = store.keys[0]!.kid;
    t += 10_000;
    await ring.rotate();
    // A replica that has not reloaded yet still signs with the old key at the rotation time.
    const stale = await new LoginTokenIssuer(other, 'reelbase', 3600, () => t).issue('user-1');
    expect(decodeProtectedHeader(stale.token).kid).toBe(oldKid);
    await other.refresh();
    const fresh = await new LoginTokenIssuer(other, 'reelbase', 3600, () => t).issue('user-2');
    expect(decodeProtectedHeader(fresh.token).kid).toBe(store.keys[1]!.kid);
    t += 3600_000 - 1000;
    await expect(issuer.verify(stale.token)).resolves.toBe('user-1');
    // The deadline passes with no reload: the key verifies nothing on either replica.
    const loads = store.loads;
    t += 1000;
    await expect(issuer.verify(stale.token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(await ring.verificationKey(oldKid)).toBeNull();
    expect(await other.verificationKey(oldKid)).toBeNull();
    expect(store.loads).toBe(loads);
    expect(await other.verificationKey(store.keys[1]!.kid)).not.toBeNull();
    // Once retired, it is not even loaded again.
    await ring.refresh();
    expect(store.keys.length).toBe(2);
    expect((await store.listUsable()).map((k) => k.kid)).toEqual([store.keys[1]!.kid]);
  });

  it('an emergency rotation retires every older key at once', async () => {
    let t = 1_000_000;
    const { store, ring, issuer } = await setup(() => t);
    const before = await issuer.issue('user-1');
    t += 1000;
    await ring.rotate();
    const between = await issuer.issue('user-2');
    t += 1000;
    const { kid, retired } = await ring.rotate(true);
    expect(retired).toBe(2);
    await expect(issuer.verify(before.token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(issuer.verify(between.token)).rejects.toMatchObject({ kind: 'unauthenticated' });
    const after = await issuer.issue('user-3');
    expect(decodeProtectedHeader(after.token).kid).toBe(kid);
    await expect(issuer.verify(after.token)).resolves.toBe('user-3');
    expect(store.keys.filter((k) => k.retiredAt === undefined).map((k) => k.kid)).toEqual([kid]);
  });

  it('reloads on an unknown kid (another replica rotated), at most once a second', async () => {
    let t = 1_000_000;
    const store = new MemoryKeys(() => t);
    const a = new SigningKeyRing(store, () => t);
    const b = new SigningKeyRing(store, () => t);
    await a.init();
    await b.init();
    t += 5000;
    await a.rotate();
    const token = (await new LoginTokenIssuer(a, 'reelbase', 3600, () => t).issue('u')).token;
    const verifier = new LoginTokenIssuer(b, 'reelbase', 3600, () => t);
    const loads = store.loads;
    await expect(verifier.verify(token)).resolves.toBe('u');
    expect(store.loads).toBe(loads + 1);
    // Forged kids within the next second do not reach the store.
    await expect(b.verificationKey('nope')).resolves.toBeNull();
    await expect(b.verificationKey('nope-2')).resolves.toBeNull();
    expect(store.loads).toBe(loads + 1);
  });

  it('issues only low-S, canonical tokens, and they verify', async () => {
    const { issuer } = await setup();
    for (let i = 0; i < 40; i++) {
      const { token } = await issuer.issue(`user-${i}`);
      expect(nonCanonicalReason(token)).toBeNull();
      await expect(issuer.verify(token)).resolves.toBe(`user-${i}`);
    }
  });

  it('refuses the high-S twin of a valid signature, which the bare signature check accepts', async () => {
    const { store, issuer } = await setup();
    const publicKey = await importJWK(store.keys[0]!.publicJwk as JWK, 'ES256');
    const { token } = await issuer.issue('user-1');
    const twin = highSTwin(token);
    expect(twin).not.toBe(token);
    // The twin is a genuine signature: only the form check refuses it.
    await expect(jwtVerify(twin, publicKey)).resolves.toBeTruthy();
    await expect(issuer.verify(twin)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('refuses every re-spelling of a segment that decodes to the same bytes', async () => {
    const { store, issuer } = await setup();
    const publicKey = await importJWK(store.keys[0]!.publicJwk as JWK, 'ES256');
    const { token } = await issuer.issue('user-1');
    const parts = token.split('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const variants: string[] = [];
    parts.forEach((seg, i) => {
      const bytes = Buffer.from(seg, 'base64url');
      for (const c of alphabet) {
        const alt = seg.slice(0, -1) + c;
        if (alt !== seg && Buffer.from(alt, 'base64url').equals(bytes)) variants.push(parts.map((p, j) => (j === i ? alt : p)).join('.'));
      }
      variants.push(parts.map((p, j) => (j === i ? `${p}${'='.repeat((4 - (p.length % 4)) % 4 || 4)}` : p)).join('.'));
    });
    // The 64-byte signature is 86 characters: its last one has four unused bits, 15 other spellings.
    expect(variants.length).toBeGreaterThanOrEqual(15 + 3);
    let acceptedByJose = 0;
    for (const v of variants) {
      if (
        await jwtVerify(v, publicKey).then(
          () => true,
          () => false,
        )
      )
        acceptedByJose++;
      await expect(issuer.verify(v), v).rejects.toMatchObject({ kind: 'unauthenticated' });
    }
    expect(acceptedByJose).toBeGreaterThanOrEqual(15);
  });

  it('refuses a validly signed token whose lifetime is longer than the configured TTL', async () => {
    const t = Date.now();
    const { ring, issuer } = await setup(() => t);
    const now = Math.floor(t / 1000);
    const { kid, privateKey } = ring.current();
    const sign = (iat: number, exp: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setSubject('user-1')
        .setIssuer('reelbase')
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(privateKey)
        .then((token) => (nonCanonicalReason(token) ? highSTwin(token) : token));
    // Exactly the TTL (3600 s here) is fine.
    await expect(issuer.verify(await sign(now, now + 3600))).resolves.toBe('user-1');
    // Ten years, signed by the real key.
    await expect(issuer.verify(await sign(now, now + 10 * 365 * 86_400))).rejects.toMatchObject({ kind: 'unauthenticated' });
    // One second more than the TTL, an old iat making room for a far exp, an iat in the future.
    await expect(issuer.verify(await sign(now, now + 3601))).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(issuer.verify(await sign(now - 7200, now + 7200))).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(issuer.verify(await sign(now + 7200, now + 7200 + 3600))).rejects.toMatchObject({ kind: 'unauthenticated' });
  });
});
