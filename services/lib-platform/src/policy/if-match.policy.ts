/**
 * `If-Match` as compared with a record's `updated_at` (its ETag, sent quoted). Surrounding
 * quotes and a weak-validator prefix `W/` are tolerated; `*`, an empty value and no header
 * all mean "no condition". The gateway passes the header through this before calling
 * records, and records applies it again for callers that reach it directly.
 */

/** The bare value to compare with `updated_at`, or undefined when there is no condition. */
export function normalizeIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  let v = header.trim();
  if (v === '' || v === '*') return undefined;
  if (v.startsWith('W/')) v = v.slice(2);
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  return v;
}
