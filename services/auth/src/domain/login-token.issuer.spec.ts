import { decodeProtectedHeader, SignJWT, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { nonCanonicalReason, P256_N } from './login-token.form.js';
import { LoginTokenIssuer } from './login-token.issuer.js';
import { SigningKeyRing, type SigningKeyStore, type StoredSigningKey } from './signing-key.ring.js';

/** The same signature with S replaced by n - S: valid ECDSA, another spelling. */
function highSTwin(token: string): string {
  const [h, p, sig] = token.split('.') as [string, string, string];
  const bytes = Buffer.from(sig, 'base64url');
  const s = BigInt(`0x${bytes.subarray(32).toString('hex')}`);
  const twin = Buffer.concat([bytes.subarray(0, 32), Buffer.from((P256_N - s).toString(16).padStart(64, '0'), 'hex')]);
  return `${h}.${p}.${twin.toString('base64url')}`;
}

/** Newest first, like the repository. */
class MemoryKeys implements SigningKeyStore {
  keys: StoredSigningKey[] = [];
  loads = 0;
  async listUsable() {
    this.loads++;
    return [...this.keys].reverse();
  }
  async insert(key: StoredSigningKey) {
    this.keys.push(key);
  }
  async ensureOne(generate: () => Promise<StoredSigningKey>) {
    if (this.keys.length === 0) this.keys.push(await generate());
  }
}

async function setup(now = () => Date.now()) {
  const store = new MemoryKeys();
  const ring = new SigningKeyRing(store, now);
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
    const kid = await ring.rotate();
    const fresh = await issuer.issue('user-2');
    expect(decodeProtectedHeader(fresh.token).kid).toBe(kid);
    expect(decodeProtectedHeader(old.token).kid).not.toBe(kid);
    await expect(issuer.verify(old.token)).resolves.toBe('user-1');
    await expect(issuer.verify(fresh.token)).resolves.toBe('user-2');
  });

  it('reloads on an unknown kid (another replica rotated), at most once a second', async () => {
    let t = 1_000_000;
    const store = new MemoryKeys();
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
