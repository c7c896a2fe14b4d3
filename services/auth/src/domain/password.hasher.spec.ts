import { describe, expect, it } from 'vitest';
import { PasswordHasher } from './password.hasher.js';

const hasher = new PasswordHasher(1024);

describe('PasswordHasher', () => {
  it('encodes scrypt$N$r$p$salt$hash and verifies the right password', async () => {
    const encoded = await hasher.hash('correct horse battery');
    const parts = encoded.split('$');
    expect(parts).toHaveLength(6);
    expect(parts.slice(0, 4)).toEqual(['scrypt', '1024', '8', '1']);
    expect(Buffer.from(parts[4]!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(parts[5]!, 'base64url')).toHaveLength(64);
    expect(await hasher.verify('correct horse battery', encoded)).toBe(true);
  });

  it('rejects a wrong password', async () => {
    const encoded = await hasher.hash('correct horse battery');
    expect(await hasher.verify('correct horse batterY', encoded)).toBe(false);
    expect(await hasher.verify('', encoded)).toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hasher.hash('same password')).not.toBe(await hasher.hash('same password'));
  });

  it('verifies hashes made at another cost (the cost travels in the encoding)', async () => {
    const old = await new PasswordHasher(256).hash('s3cret-pass');
    expect(await hasher.verify('s3cret-pass', old)).toBe(true);
  });

  it('never matches a malformed or tampered encoding', async () => {
    const encoded = await hasher.hash('s3cret-pass');
    const parts = encoded.split('$');
    expect(await hasher.verify('s3cret-pass', 'plain-text')).toBe(false);
    expect(await hasher.verify('s3cret-pass', ['bcrypt', ...parts.slice(1)].join('$'))).toBe(false);
    expect(await hasher.verify('s3cret-pass', [...parts.slice(0, 1), '1000', ...parts.slice(2)].join('$'))).toBe(false);
    expect(await hasher.verify('s3cret-pass', [...parts.slice(0, 5), parts[5]!.slice(0, 20)].join('$'))).toBe(false);
  });

  it('answers false for the dummy verification', async () => {
    expect(await hasher.verifyDummy('anything at all')).toBe(false);
  });
});
