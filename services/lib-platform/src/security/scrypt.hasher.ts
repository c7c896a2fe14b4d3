/**
 * Password hashing with scrypt (node:crypto): a slow, memory-hard hash, stored as
 * `scrypt$N$r$p$salt$hash` so the cost can be raised later without breaking old hashes. Used by
 * auth for user passwords and by records for share-link passwords (docs/review.md).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const R = 8;
const P = 1;
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** Upper bound on N accepted from a stored hash, so a corrupt row cannot exhaust memory. */
const MAX_N = 1 << 20;

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))));
}

interface Parsed {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parse(encoded: string): Parsed | null {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map((s) => (/^\d{1,8}$/.test(s!) ? Number(s) : NaN)) as [number, number, number];
  if (!(N >= 2 && N <= MAX_N && (N & (N - 1)) === 0) || !(r >= 1 && r <= 32) || !(p >= 1 && p <= 16)) return null;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const hash = Buffer.from(parts[5]!, 'base64url');
  if (salt.length < 8 || hash.length !== KEY_BYTES) return null;
  return { N, r, p, salt, hash };
}

/** Hashes and verifies secrets (user and share-link passwords) at cost N. */
export class ScryptHasher {
  constructor(private readonly cost: number) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_BYTES);
    const key = await derive(password, salt, this.cost, R, P);
    return ['scrypt', this.cost, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  /** True when `password` matches `encoded`; a malformed encoding never matches. */
  async verify(password: string, encoded: string): Promise<boolean> {
    const parsed = parse(encoded);
    if (!parsed) return false;
    const key = await derive(password, parsed.salt, parsed.N, parsed.r, parsed.p);
    return timingSafeEqual(key, parsed.hash);
  }
}
