/**
 * The secrets of share links (docs/review.md): tokens of 256 random bits of which only the
 * SHA-256 digest is stored, and link passwords kept as scrypt hashes with a per-link salt
 * (`scrypt$N$r$p$salt$hash`, the format auth uses), both compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ScryptHasher, sharePolicy } from '@reelbase/lib-platform';

/** Random bytes per token (256 bits; base64url gives 43 characters). */
const TOKEN_BYTES = 32;
/** Characters of the token kept beside the digest so a list can tell links apart (36 of 256 bits). */
export const TOKEN_PREFIX_CHARS = sharePolicy.TOKEN_PREFIX_CHARS;
/** The spelling of a token this service issues: 43 base64url characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

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

/** Link passwords: scrypt with a salt per link, in the format auth stores user passwords in (lib-platform). */
export class SharePasswords extends ScryptHasher {}
