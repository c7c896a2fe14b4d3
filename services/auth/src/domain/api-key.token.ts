/**
 * API key tokens: `svc_` + 32 random bytes (base64url). Only the sha256 of the whole token
 * is stored; a short prefix is kept so users can tell their keys apart.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'svc_';
/** Characters of the token kept for display (`svc_` + 8). */
export const DISPLAY_PREFIX_LENGTH = 12;

export interface GeneratedApiKey {
  token: string;
  hash: string;
  prefix: string;
}

/** True when `token` is shaped like an API key rather than a login token. */
export function isApiKeyToken(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

/** sha256 (hex) of the whole token. */
export function hashApiKey(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A new key with its hash and display prefix. */
export function generateApiKey(): GeneratedApiKey {
  const token = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashApiKey(token), prefix: token.slice(0, DISPLAY_PREFIX_LENGTH) };
}
