/**
 * The secrets of share links (docs/review.md): tokens of 256 random bits of which only the
 * SHA-256 digest is stored, and link passwords kept as scrypt hashes with a per-link salt
 * (`scrypt$N$r$p$salt$hash`, the format auth uses), both compared in constant time.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Random bytes per token (256 bits; base64url gives 43 characters). */
const TOKEN_BYTES = 32;
/** Characters of the token kept beside the digest so a list can tell links apart (36 of 256 bits). */
export const TOKEN_PREFIX_CHARS = 6;
/** The spelling of a token this service issues: 43 base64url characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const R = 8;
const P = 1;
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** Upper bound on N accepted from a stored hash, so a corrupt row cannot exhaust memory. */
const MAX_N = 1 << 20;

/** A new token with its digest and display prefix. */
export function newShareToken(): { token: string; digest: Buffer; prefix: string } {
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, digest: tokenDigest(token), prefix: token.slice(0, TOKEN_PREFIX_CHARS) };
}

/** True when `token` is spelled like a token this service issues (anything else is simply unknown). */
export function isShareToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** SHA-256 of the token: what is stored and looked up. */
export function tokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time equality of two digests. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes and verifies link passwords with scrypt at cost N. */
export class SharePasswords {
  constructor(private readonly cost: number) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const key = await derive(password, salt, this.cost, R, P);
    return ['scrypt', this.cost, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  /** True when `password` matches `encoded`; a malformed encoding never matches. */
  async verify(password: string, encoded: string): Promise<boolean> {
    const parts = encoded.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [N, r, p] = parts.slice(1, 4).map((s) => (/^\d{1,8}$/.test(s!) ? Number(s) : NaN)) as [number, number, number];
    if (!(N >= 2 && N <= MAX_N && (N & (N - 1)) === 0) || !(r >= 1 && r <= 32) || !(p >= 1 && p <= 16)) return false;
    const salt = Buffer.from(parts[4]!, 'base64url');
    const hash = Buffer.from(parts[5]!, 'base64url');
    if (salt.length < 8 || hash.length !== KEY_BYTES) return false;
    const key = await derive(password, salt, N, r, p);
    return timingSafeEqual(key, hash);
  }
}
