import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config.js';
import { SecretCipher, SecretCipherError, decodeSecretsKey, envSecretsKey, envSecretsKeysPrevious } from './secret.cipher.js';

const newKey = () => randomBytes(32).toString('base64');

describe('SecretCipher', () => {
  const key = newKey();
  const cipher = new SecretCipher(key);

  it('round-trips a value, with a fresh IV each time and nothing of the plain text in the sealed form', () => {
    const plain = '{"kty":"EC","d":"private-part","crv":"P-256"}';
    const a = cipher.seal(plain, 'auth.signing_key:k1');
    const b = cipher.seal(plain, 'auth.signing_key:k1');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^enc:v1:[0-9a-f]{16}:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    expect(a).not.toContain('private-part');
    expect(SecretCipher.isSealed(a)).toBe(true);
    expect(SecretCipher.isSealed(plain)).toBe(false);
    expect(cipher.isCurrent(a)).toBe(true);
    expect(cipher.open(a, 'auth.signing_key:k1')).toBe(plain);
    expect(cipher.open(cipher.seal('', 'x'), 'x')).toBe('');
  });

  it('refuses an altered value', () => {
    const sealed = cipher.seal('webhook-secret', 'notifier.webhook:1');
    const parts = sealed.split(':');
    const body = Buffer.from(parts[4]!, 'base64url');
    body[0] = body[0]! ^ 1;
    const altered = [...parts.slice(0, 4), body.toString('base64url'), parts[5]].join(':');
    expect(() => cipher.open(altered, 'notifier.webhook:1')).toThrow(SecretCipherError);
    const tag = Buffer.from(parts[5]!, 'base64url');
    tag[3] = tag[3]! ^ 0x80;
    expect(() => cipher.open([...parts.slice(0, 5), tag.toString('base64url')].join(':'), 'notifier.webhook:1')).toThrow(SecretCipherError);
    expect(() => cipher.open(sealed.slice(0, -2), 'notifier.webhook:1')).toThrow(SecretCipherError);
    expect(() => cipher.open('plain text', 'notifier.webhook:1')).toThrow(SecretCipherError);
  });

  it('refuses a value moved to another row', () => {
    const sealed = cipher.seal('webhook-secret', 'notifier.webhook:1');
    expect(() => cipher.open(sealed, 'notifier.webhook:2')).toThrow(/another row/);
  });

  it('refuses a value sealed with another key, and opens it once that key is a previous one', () => {
    const other = newKey();
    const sealed = new SecretCipher(other).seal('s3cret', 'ctx');
    expect(() => cipher.open(sealed, 'ctx')).toThrow(/neither SECRETS_KEY/);
    // Same key id forged onto another key's output: the tag does not verify.
    const forged = sealed.split(':');
    forged[2] = cipher.seal('x', 'ctx').split(':')[2]!;
    expect(() => cipher.open(forged.join(':'), 'ctx')).toThrow(SecretCipherError);
    const rotated = new SecretCipher(newKey(), [other]);
    expect(rotated.open(sealed, 'ctx')).toBe('s3cret');
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(rotated.isCurrent(rotated.seal('s3cret', 'ctx'))).toBe(true);
  });

  it('takes only 32-byte base64 keys', () => {
    expect(decodeSecretsKey(randomBytes(32).toString('base64url'))).toHaveLength(32);
    expect(decodeSecretsKey(randomBytes(31).toString('base64'))).toBeNull();
    expect(decodeSecretsKey('not base64!')).toBeNull();
    expect(() => new SecretCipher('short')).toThrow(/32 bytes/);
    const shape = { SECRETS_KEY: envSecretsKey(), SECRETS_KEY_PREVIOUS: envSecretsKeysPrevious() };
    expect(() => parseConfig(shape, {})).toThrow(/SECRETS_KEY: is required/);
    expect(() => parseConfig(shape, { SECRETS_KEY: 'abc' })).toThrow(/32 bytes/);
    expect(() => parseConfig(shape, { SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: `${newKey()},bad` })).toThrow(/SECRETS_KEY_PREVIOUS/);
    expect(parseConfig(shape, { SECRETS_KEY: key })).toEqual({ SECRETS_KEY: key });
    const prev = newKey();
    expect(parseConfig(shape, { SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: ` ${prev} ,` })).toEqual({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: [prev] });
  });
});
