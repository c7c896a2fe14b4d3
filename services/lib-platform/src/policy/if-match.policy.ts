/**
 * `If-Match` as compared with a record's `updated_at` (its ETag, sent quoted), after RFC 9110
 * §13.1.1: `*` matches any current record; otherwise the header is a list of entity tags and
 * the write applies only when one of them is the record's. Surrounding quotes and a
 * weak-validator prefix `W/` are tolerated, and so is a bare `updated_at`. An empty or
 * malformed header is a condition that never holds (409 `stale_write`), never "no condition":
 * only an absent header means that. The gateway passes the header through
 * {@link normalizeIfMatch} before calling records, and records applies it again (it is
 * idempotent) for callers that reach it directly.
 */

/** The normalised form of a header that never matches (empty or malformed). */
export const IF_MATCH_NEVER = '';

/** One entity tag's value: no quote, comma, space or control character (RFC 9110 `etagc`). */
const ETAGC = /^[\x21\x23-\x2b\x2d-\x7e]+$/;

/**
 * The condition to compare with `updated_at`: undefined when there is none (no header), `*`
 * for any current record, the bare tags joined by `, ` for a list, {@link IF_MATCH_NEVER} for an
 * empty or malformed header.
 */
export function normalizeIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const v = header.trim();
  if (v === '*') return '*';
  const tags: string[] = [];
  for (const part of v.split(',')) {
    let t = part.trim();
    if (t.startsWith('W/')) t = t.slice(2);
    if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) t = t.slice(1, -1);
    if (!ETAGC.test(t)) return IF_MATCH_NEVER;
    tags.push(t);
  }
  return tags.join(', ');
}

/** True when a write conditioned by `header` may apply to a current record whose ETag is `current`. */
export function ifMatchHolds(header: string | undefined, current: string): boolean {
  const expected = normalizeIfMatch(header);
  if (expected === undefined || expected === '*') return true;
  if (expected === IF_MATCH_NEVER) return false;
  return expected.split(', ').includes(current);
}
