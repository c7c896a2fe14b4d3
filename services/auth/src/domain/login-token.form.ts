/**
 * The one spelling of a login token this service issues and accepts. A JWT can be re-spelled
 * without its key: a base64url segment whose last character carries unused bits decodes to the
 * same bytes under several spellings, and an ECDSA signature (r, s) has a twin (r, n - s) that
 * verifies as well. Each spelling would be a different string for caches and rate-limit
 * buckets, so only the canonical one is accepted: every segment re-encodes to itself, and the
 * signature's S lies in the lower half of the P-256 group order (tokens are issued that way).
 */

/** Order n of the P-256 group. */
export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_N = P256_N >> 1n;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const ES256_SIGNATURE_BYTES = 64;

/** True when `seg` is unpadded base64url that re-encodes to exactly itself. */
export function isCanonicalSegment(seg: string): boolean {
  return SEGMENT.test(seg) && Buffer.from(seg, 'base64url').toString('base64url') === seg;
}

const toBigInt = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex') || '0'}`);
const toBytes32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, '0'), 'hex');

/**
 * Why `token` is not in canonical form (three canonical segments, a 64-byte ES256 signature
 * with 0 < S <= n/2), or null when it is.
 */
export function nonCanonicalReason(token: string): string | null {
  const parts = token.split('.');
  if (parts.length !== 3) return 'not three segments';
  if (!parts.every(isCanonicalSegment)) return 'segment not canonical base64url';
  const sig = Buffer.from(parts[2]!, 'base64url');
  if (sig.length !== ES256_SIGNATURE_BYTES) return 'signature length';
  const s = toBigInt(sig.subarray(32));
  if (s === 0n || s > HALF_N) return 'signature S not in the lower half';
  return null;
}

/** `token` with its ES256 signature's S moved to the lower half (the same signature, one spelling). */
export function withLowS(token: string): string {
  const parts = token.split('.');
  const sig = Buffer.from(parts[2]!, 'base64url');
  if (sig.length !== ES256_SIGNATURE_BYTES) throw new Error('not an ES256 signature');
  const s = toBigInt(sig.subarray(32));
  if (s <= HALF_N) return token;
  const fixed = Buffer.concat([sig.subarray(0, 32), toBytes32(P256_N - s)]);
  return `${parts[0]}.${parts[1]}.${fixed.toString('base64url')}`;
}
