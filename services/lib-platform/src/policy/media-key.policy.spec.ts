import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import {
  assertMediaKey,
  isGuestMediaKey,
  isMediaKey,
  mediaExtension,
  mediaKeyFromPath,
  mediaKeyProblem,
  newMediaPrefix,
  uploadFileName,
} from './media-key.policy.js';

const HEX = '0123456789abcdef0123456789abcdef';
const GOOD = `rv/${HEX}/proxy.mp4`;

/**
 * Request paths after `/media/`, as a client may send them (before the one decoding). Each
 * must be refused with bad_request: none may reach the store.
 */
const HOSTILE_MEDIA_PATHS: readonly string[] = [
  '..',
  '../../etc/passwd',
  `rv/${HEX}/..`,
  `rv/${HEX}/../../etc/passwd`,
  `rv/../${HEX}/proxy.mp4`,
  `rv/${HEX}/%2e%2e`,
  `rv/${HEX}/%2E%2E`,
  `rv/${HEX}/%2e%2e%2fetc%2fpasswd`,
  `%2e%2e%2f%2e%2e%2fetc%2fpasswd`,
  `rv/${HEX}/%252e%252e`,
  `rv/${HEX}%2f..%2f..%2fetc%2fpasswd`,
  `rv/${HEX}/..%5c..%5cwindows`,
  `rv\\${HEX}\\proxy.mp4`,
  `rv/${HEX}/proxy.mp4%5c..`,
  `/etc/passwd`,
  `%2fetc%2fpasswd`,
  `/rv/${HEX}/proxy.mp4`,
  `C:%5cwindows%5cwin.ini`,
  `rv/${HEX}/proxy.mp4%00`,
  `rv/${HEX}/proxy.mp4%00.jpg`,
  `rv/${HEX}/%c0%ae%c0%ae`,
  `rv/${HEX}/%c0%af`,
  `rv/${HEX}/%e0%80%ae%e0%80%ae`,
  `rv/${HEX}/%ef%bc%8e%ef%bc%8e`,
  `rv/${HEX}/%e2%80%a4%e2%80%a4`,
  `rv/${HEX}/%u002e%u002e`,
  `rv//${HEX}/proxy.mp4`,
  `rv/${HEX}//proxy.mp4`,
  `rv/${HEX}/`,
  `rv/${HEX}`,
  `rv/${HEX.toUpperCase()}/proxy.mp4`,
  `rv/${HEX.slice(1)}/proxy.mp4`,
  `rv/${HEX}0/proxy.mp4`,
  `rv/${HEX}/Proxy.MP4`,
  `rv/${HEX}/proxy.mp4/extra`,
  `rv/${HEX}/proxy%20.mp4`,
  `rv/${HEX}/proxy.mp4%0a`,
  `rv/${HEX}/.`,
  `rv/${HEX}/...`,
  `rv/${HEX}/a..b`,
  `other/${HEX}/proxy.mp4`,
  `file:%2f%2f%2fetc%2fpasswd`,
  `rv/${HEX}/${'a'.repeat(65)}`,
  `rv/${HEX}/%`,
  `rv/${HEX}/%zz`,
  `rv/${HEX}/%c3%28`,
  '',
];

describe('media keys', () => {
  it('accepts the keys the service writes', () => {
    for (const name of ['original.mov', 'original', 'thumb.jpg', 'proxy.mp4', 'proxy.jpg', 'a_b-c.d']) {
      expect(isMediaKey(`rv/${HEX}/${name}`)).toBe(true);
    }
    expect(mediaKeyFromPath(GOOD)).toBe(GOOD);
    expect(mediaKeyFromPath(`rv/${HEX}/proxy%2emp4`)).toBe(GOOD);
  });

  it(`refuses ${HOSTILE_MEDIA_PATHS.length} hostile spellings as bad_request`, () => {
    expect(HOSTILE_MEDIA_PATHS.length).toBeGreaterThanOrEqual(30);
    for (const path of HOSTILE_MEDIA_PATHS) {
      let caught: unknown;
      try {
        mediaKeyFromPath(path);
      } catch (err) {
        caught = err;
      }
      expect(caught, path).toBeInstanceOf(AppError);
      expect((caught as AppError).kind, path).toBe('bad_request');
      expect((caught as AppError).code, path).toBe('bad_request');
    }
  });

  it('decodes only once: a doubly encoded dot stays a refused percent sign', () => {
    expect(() => mediaKeyFromPath(`rv/${HEX}/%252e%252e`)).toThrow(/malformed media key/);
    expect(mediaKeyProblem(`rv/${HEX}/%2e%2e`)).toBeDefined();
  });

  it('refuses decoded keys carrying NUL, backslashes, unicode dots and absolute paths', () => {
    for (const key of [`rv/${HEX}/proxy.mp4\0`, `rv\\${HEX}\\proxy.mp4`, `rv/${HEX}/\u2024\u2024`, `rv/${HEX}/\uff0e\uff0e`, `/rv/${HEX}/x`]) {
      expect(() => assertMediaKey(key), JSON.stringify(key)).toThrow(AppError);
    }
  });

  it("passes a guest's key through the path, but never as a key the media service reads", () => {
    const guest = `sh/${'A_-z9'.repeat(17)}x/proxy.mp4`;
    expect(isGuestMediaKey(guest)).toBe(true);
    expect(mediaKeyFromPath(guest)).toBe(guest);
    expect(() => assertMediaKey(guest)).toThrow(AppError);
    // Any name is a guest key's shape (only the gateway knows which open): a guessed name is 404, not 400.
    expect(isGuestMediaKey(`sh/${'A'.repeat(86)}/original.mov`)).toBe(true);
    for (const bad of [
      `sh/${'A'.repeat(85)}/proxy.mp4`,
      `sh/${'A'.repeat(87)}/proxy.mp4`,
      `sh/${'A'.repeat(85)}./proxy.mp4`,
      `sh/${'A'.repeat(86)}/..`,
      `sh/${'A'.repeat(86)}/a..b`,
      `sh/${'A'.repeat(86)}/.`,
      `sh/${'A'.repeat(86)}/Proxy.mp4`,
      `sh/${'A'.repeat(86)}/proxy.mp4/x`,
      `sh/${'A'.repeat(86)}/${'a'.repeat(65)}`,
    ]) {
      expect(isGuestMediaKey(bad), bad).toBe(false);
      expect(() => mediaKeyFromPath(bad), bad).toThrow(AppError);
    }
  });

  it('makes prefixes of 128 random bits, never the same twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const prefix = newMediaPrefix();
      expect(prefix).toMatch(/^rv\/[0-9a-f]{32}$/);
      expect(isMediaKey(`${prefix}/thumb.jpg`)).toBe(true);
      seen.add(prefix);
    }
    expect(seen.size).toBe(1000);
  });

  it('keeps only a safe extension of the client file name', () => {
    expect(mediaExtension('Shot 010.MOV')).toBe('.mov');
    expect(mediaExtension('render.exr')).toBe('.exr');
    expect(mediaExtension('noext')).toBe('');
    expect(mediaExtension('.hidden')).toBe('');
    expect(mediaExtension('a.b/../../c')).toBe('');
    expect(mediaExtension('x.t%2e')).toBe('');
    expect(mediaExtension('x.averyveryverylongext')).toBe('');
    expect(mediaExtension('C:\\renders\\shot.Mp4')).toBe('.mp4');
  });
});

describe('uploadFileName', () => {
  it('keeps the last path segment without control characters or bidirectional overrides', () => {
    expect(uploadFileName('plate_v003.mov')).toBe('plate_v003.mov');
    expect(uploadFileName('../../etc/passwd.mov')).toBe('passwd.mov');
    expect(uploadFileName('C:\\renders\\shot 010.exr')).toBe('shot 010.exr');
    expect(uploadFileName('a\u0000b.mov')).toBe('ab.mov');
    expect(uploadFileName('a\r\nb\t.mov')).toBe('ab.mov');
    expect(uploadFileName('a\u0085b\u007f.mov')).toBe('ab.mov');
    expect(uploadFileName('clip\u202egnp.exe')).toBe('clipgnp.exe');
    expect(uploadFileName('plan é 😀.mov')).toBe('plan é 😀.mov');
    expect(uploadFileName('x'.repeat(300) + '.mov')).toBe('x'.repeat(255));
    expect(uploadFileName('😀'.repeat(300))).toBe('😀'.repeat(255));
    for (const empty of ['', '/', 'a/', '\u0000', '  ']) expect(uploadFileName(empty)).toBe('reviewable');
  });
});
