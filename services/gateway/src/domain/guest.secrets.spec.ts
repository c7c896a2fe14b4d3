import { isGuestMediaKey, mediaKeyFromPath } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { GuestSecrets } from './guest.secrets.js';

const SECRET = 'guest-secrets-spec-internal-secret-0123456789';
const LINK = '0190a0b0-0000-7000-8000-0000000000a1';
const OTHER_LINK = '0190a0b0-0000-7000-8000-0000000000a2';
const PROXY = 'rv/0123456789abcdef0123456789abcdef/proxy.mp4';

/** Flips one bit of the base64url text at `i` (to another base64url character). */
function flip(text: string, i: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const c = alphabet.indexOf(text[i]!);
  return text.slice(0, i) + alphabet[c ^ 1] + text.slice(i + 1);
}

describe('guest media keys', () => {
  it('stand for one proxy or thumbnail of one link, never show the rv key, and open in any replica sharing the secret', () => {
    const a = new GuestSecrets(SECRET);
    const key = a.mediaKey(LINK, PROXY, 600)!;
    expect(key).toMatch(/^sh\/[A-Za-z0-9_-]{86}\/proxy\.mp4$/);
    expect(key).not.toContain('0123456789abcdef');
    expect(isGuestMediaKey(key)).toBe(true);
    expect(mediaKeyFromPath(key)).toBe(key);
    // Another replica (same secret) opens it; a different secret does not.
    expect(new GuestSecrets(SECRET).openMediaKey(key)).toEqual({ linkId: LINK, key: PROXY });
    expect(new GuestSecrets(`${SECRET}-other`).openMediaKey(key)).toBeUndefined();
    // Two keys for the same object differ (a fresh nonce each time).
    expect(a.mediaKey(LINK, PROXY, 600)).not.toBe(key);
    expect(a.mediaKey(LINK, 'rv/0123456789abcdef0123456789abcdef/thumb.jpg', 600)).toMatch(/\/thumb\.jpg$/);
  });

  it('are never issued for an original or a malformed key', () => {
    const s = new GuestSecrets(SECRET);
    for (const k of ['rv/0123456789abcdef0123456789abcdef/original.mov', 'rv/xyz/proxy.mp4', '../proxy.mp4', PROXY.toUpperCase()]) {
      expect(s.mediaKey(LINK, k, 600), k).toBeUndefined();
    }
    expect(s.mediaKey('not-a-uuid', PROXY, 600)).toBeUndefined();
  });

  it('do not open once altered in any byte, renamed, or expired', () => {
    let now = 1_800_000_000_000;
    const s = new GuestSecrets(SECRET, () => now);
    const key = s.mediaKey(LINK, PROXY, 600)!;
    const sealed = key.split('/')[1]!;
    for (let i = 0; i < sealed.length - 1; i++) {
      expect(s.openMediaKey(`sh/${flip(sealed, i)}/proxy.mp4`), `byte ${i}`).toBeUndefined();
    }
    // The name is authenticated: the same seal under another name opens nothing.
    expect(s.openMediaKey(`sh/${sealed}/thumb.jpg`)).toBeUndefined();
    expect(s.openMediaKey(`sh/${sealed}/original.mov`)).toBeUndefined();
    expect(s.openMediaKey(`sh/${sealed}=/proxy.mp4`)).toBeUndefined();
    expect(s.openMediaKey(PROXY)).toBeUndefined();
    now += 599_000;
    expect(s.openMediaKey(key)).toEqual({ linkId: LINK, key: PROXY });
    now += 1_000;
    expect(s.openMediaKey(key)).toBeUndefined();
  });
});

describe('guest sessions', () => {
  it('name their link until they expire; forged, altered or foreign ones name none', () => {
    let now = 1_800_000_000_000;
    const s = new GuestSecrets(SECRET, () => now);
    const { token, expiresAt } = s.session(LINK, 1800);
    expect(token).toMatch(/^[A-Za-z0-9_-]{70}$/);
    expect(expiresAt).toBe(new Date(now + 1800_000).toISOString());
    expect(s.openSession(token)).toBe(LINK);
    expect(new GuestSecrets(SECRET, () => now).openSession(token)).toBe(LINK);
    expect(new GuestSecrets(`${SECRET}-other`, () => now).openSession(token)).toBeUndefined();
    expect(s.openSession(s.session(OTHER_LINK, 1800).token)).toBe(OTHER_LINK);
    for (let i = 0; i < token.length - 1; i++) expect(s.openSession(flip(token, i)), `char ${i}`).toBeUndefined();
    for (const bad of [undefined, '', 'x', `${token}A`, token.slice(1)]) expect(s.openSession(bad)).toBeUndefined();
    now += 1800_000;
    expect(s.openSession(token)).toBeUndefined();
  });
});
