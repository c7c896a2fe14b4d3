/**
 * The `Range` header of `GET /media/{key}` (RFC 9110 §14), in bytes:
 * - `bytes=a-b` (b clamped to the end), `bytes=a-` (to the end) and `bytes=-n` (the last n
 *   bytes) are served 206 with that range;
 * - several ranges (`bytes=0-1,5-9`) are served whole, 200: media players ask for one, and a
 *   multipart/byteranges answer would only help clients nobody uses here;
 * - a header that is not a byte range at all (another unit, bad syntax, b < a) is ignored, as
 *   the RFC asks: 200 with the whole object;
 * - a range that starts at or past the end (or a suffix of 0 bytes, or any range of an empty
 *   object) is 416 with `Content-Range: bytes *\/<size>`, decided once the size is known.
 */

/** What a request asks for. */
export type RangeRequest =
  | { kind: 'whole' }
  /** `end` undefined: to the end of the object. */
  | { kind: 'from'; start: number; end?: number }
  | { kind: 'suffix'; length: number };

const SINGLE = /^bytes=[ \t]*(\d*)-(\d*)[ \t]*$/i;
/** Digits beyond this are no offset any object here can have (and would lose precision). */
const MAX_DIGITS = 15;

/** Parses a Range header value (undefined → whole). */
export function parseRange(header: string | undefined): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  if (header.includes(',')) return { kind: 'whole' };
  const m = SINGLE.exec(header);
  if (!m) return { kind: 'whole' };
  const [, a = '', b = ''] = m;
  if (a.length > MAX_DIGITS || b.length > MAX_DIGITS) return { kind: 'whole' };
  if (a === '' && b === '') return { kind: 'whole' };
  if (a === '') return { kind: 'suffix', length: Number(b) };
  const start = Number(a);
  if (b === '') return { kind: 'from', start };
  const end = Number(b);
  if (end < start) return { kind: 'whole' };
  return { kind: 'from', start, end };
}

/** The inclusive byte range to send of an object of `size` bytes, or null when unsatisfiable. */
export function resolveRange(range: Exclude<RangeRequest, { kind: 'whole' }>, size: number): { start: number; end: number } | null {
  if (size <= 0) return null;
  if (range.kind === 'suffix') {
    if (range.length === 0) return null;
    return { start: Math.max(0, size - range.length), end: size - 1 };
  }
  if (range.start >= size) return null;
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

/**
 * Entity-tag comparison of the conditional headers (RFC 9110 §8.8.3.2): `weak` compares the
 * opaque tags only (If-None-Match), else both must be strong (If-Range).
 */
function sameTag(a: string, b: string, weak: boolean): boolean {
  const isWeak = (t: string) => t.startsWith('W/');
  if (!weak && (isWeak(a) || isWeak(b))) return false;
  const opaque = (t: string) => (isWeak(t) ? t.slice(2) : t);
  return opaque(a) === opaque(b);
}

/** Whether an `If-None-Match` value (`*` or a list of entity tags) matches `etag`: answer 304. */
export function noneMatchHits(header: string, etag: string): boolean {
  const value = header.trim();
  if (value === '*') return true;
  return (value.match(/(?:W\/)?"[^"]*"/g) ?? []).some((t) => sameTag(t, etag, true));
}

/**
 * Whether an `If-Range` value lets the `Range` apply (RFC 9110 §13.1.5): only a strong entity tag
 * equal to `etag`. A date never does (media answers carry no `Last-Modified` to compare it with),
 * so the whole object is sent, which is what the client asks for when its copy may be stale.
 */
export function ifRangeHolds(header: string, etag: string): boolean {
  const value = header.trim();
  return /^"[^"]*"$/.test(value) && sameTag(value, etag, false);
}
