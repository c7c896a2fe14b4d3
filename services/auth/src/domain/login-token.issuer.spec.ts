import { decodeProtectedHeader, SignJWT, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { LoginTokenIssuer } from './login-token.issuer.js';
import { SigningKeyRing, type SigningKeyStore, type StoredSigningKey } from './signing-key.ring.js';

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
});
