/**
 * The one timestamp format that leaves the services: ISO 8601 UTC with exactly six fraction
 * digits (`2026-03-01T10:20:30.123456Z`). PostgreSQL keeps microseconds and a JS `Date` only
 * milliseconds, so timestamps are formatted by PostgreSQL itself; a record's `updated_at` in
 * this form is also its ETag, compared as a string.
 */

/** The `to_char` pattern of the format. */
export const PG_ISO_MICROS_PATTERN = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** A SQL expression formatting the `timestamptz` expression `col` in the format. */
export function sqlIsoMicros(col: string): string {
  return `to_char(${col} at time zone 'UTC', '${PG_ISO_MICROS_PATTERN}')`;
}

/** Matches a timestamp in the format. */
export const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * `date` in the format, with `micros` (0–999) as the three digits a `Date` cannot hold
 * (tests and fakes that need timestamps as the services send them).
 */
export function isoMicros(date: Date, micros = 0): string {
  if (!Number.isInteger(micros) || micros < 0 || micros > 999) throw new RangeError(`micros must be 0..999, not ${micros}`);
  return date.toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}
