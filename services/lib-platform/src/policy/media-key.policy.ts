/**
 * Media object keys (docs/media.md): `rv/<32 lowercase hex>/<name>`, where the 32 hex digits
 * are 128 random bits chosen when the original is stored, and `<name>` is `original<.ext>`,
 * `thumb.jpg`, `proxy.mp4` or `proxy.jpg`. The gateway checks a key as it arrives in the
 * path (decoded once) and the media service checks it again before it touches the store,
 * so a key that is malformed or would leave the `rv/` prefix is refused twice and never
 * served: every spelling that is not exactly this shape (encoded dots or slashes, a second
 * decoding, backslashes, absolute paths, NUL, non-ASCII look-alikes, empty segments) fails.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';

/** The only shape a media key may have. */
export const MEDIA_KEY_PATTERN = /^rv\/[0-9a-f]{32}\/[a-z0-9_.-]{1,64}$/;

/** Longest key: `rv/` + 32 + `/` + 64. */
export const MEDIA_KEY_MAX_LENGTH = 100;

/**
 * A guest's media key (docs/review.md): `sh/<86 base64url characters>/<name>`, a sealed and
 * short-lived stand-in for one proxy or thumbnail, bound to a share link. Only the gateway opens
 * it (and turns it into the `rv/` key it stands for; any other name opens nothing, 404); the
 * media service never accepts one.
 */
export const GUEST_MEDIA_KEY_PATTERN = /^sh\/[A-Za-z0-9_-]{86}\/[a-z0-9_.-]{1,64}$/;

/** True when `key` is spelled like a guest's media key (whether it opens is the gateway's check). */
export function isGuestMediaKey(key: string): boolean {
  if (!GUEST_MEDIA_KEY_PATTERN.test(key)) return false;
  const name = key.slice(key.lastIndexOf('/') + 1);
  return name !== '.' && !name.includes('..');
}

/** Why `key` is not a media key, or undefined when it is one. */
export function mediaKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'the media key is empty';
  if (key.length > MEDIA_KEY_MAX_LENGTH) return `a media key has at most ${MEDIA_KEY_MAX_LENGTH} characters`;
  if (!MEDIA_KEY_PATTERN.test(key)) return 'a media key is rv/<32 lowercase hex digits>/<name of a-z, 0-9, "_", "." or "-">';
  const name = key.slice(key.lastIndexOf('/') + 1);
  if (name === '.' || name.includes('..')) return 'a media key has no "." or ".." segment';
  return undefined;
}

/** True when `key` is a well-formed media key. */
export function isMediaKey(key: string): boolean {
  return mediaKeyProblem(key) === undefined;
}

/** Throws a `bad_request` AppError (HTTP 400) unless `key` is a well-formed media key. */
export function assertMediaKey(key: string): string {
  const problem = mediaKeyProblem(key);
  if (problem !== undefined) throw new AppError('bad_request', `malformed media key: ${problem}`, { code: 'bad_request' });
  return key;
}

/**
 * The key of a request path after `/media/`, decoded exactly once: a media key, or a guest's media
 * key. A segment that does not decode (a lone `%`, an invalid UTF-8 sequence such as overlong
 * forms) is refused like any other malformed key.
 */
export function mediaKeyFromPath(encoded: string): string {
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    throw new AppError('bad_request', 'malformed media key: the path does not decode as UTF-8', { code: 'bad_request' });
  }
  return isGuestMediaKey(key) ? key : assertMediaKey(key);
}

/** A new object prefix `rv/<32 hex>` with 128 random bits. */
export function newMediaPrefix(): string {
  return `rv/${randomBytes(16).toString('hex')}`;
}

/**
 * The extension kept from a client's file name for `original<.ext>`: lower-cased, letters and
 * digits only, at most 10 characters; empty when the name has none that qualifies.
 */
export function mediaExtension(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || dot === base.length - 1) return '';
  const ext = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,10}$/.test(ext) ? `.${ext}` : '';
}

/** Marks that change how the text around them is shown (bidirectional overrides, isolates, LRM/RLM). */
const BIDI_CONTROLS = new Set([0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);

/**
 * The name an upload's file is kept under (docs/api-notes.md, "Reviewables"): the last path segment
 * of what the client sent, without control characters (NUL, CR, LF, … which PostgreSQL refuses or
 * which would split a header or a log line) and without bidirectional overrides (which could show
 * `gnp.exe` for `exe.png`), at most 255 characters; `reviewable` when nothing is left.
 */
export function uploadFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? '';
  const kept = [...base].filter((c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0x1f && !(cp >= 0x7f && cp <= 0x9f) && !BIDI_CONTROLS.has(cp);
  });
  return kept.slice(0, 255).join('').trim() || 'reviewable';
}
