/**
 * The grammar of the query filter language (docs/api-notes.md, Queries; compiled by
 * filter.compiler.ts): its limits, operators and code patterns, how a problem is refused, and the
 * checks on a condition's values that need no schema.
 *
 * - A filter is a list of items (all must hold) or `{"filter_operator": "all"|"any", "filters": [...]}`;
 *   an item is a condition `[path, operator, value]` (`[path, "between"|"not_between", low, high]`)
 *   or a group; groups nest to depth 8 (the top-level filter is depth 1).
 * - Negative operators (`is_not`, `not_in`, `not_contains`, `not_between`, `type_is_not`) are the
 *   negation of their positive form (NEGATIVE).
 */
import { isUuid, type Problem } from '@reelbase/lib-platform';

export type Loc = (string | number)[];

/** The record columns a path may name. */
export const QUERY_COLUMNS = ['id', 'project_id', 'status', 'active', 'created_by', 'created_at', 'updated_at', 'thumbnail_id', 'entity_type'] as const;
export type QueryColumn = (typeof QUERY_COLUMNS)[number];

/** Greatest nesting of filter groups (the top-level filter counts as 1). */
export const MAX_FILTER_DEPTH = 8;
/** Greatest number of link hops in one path. */
export const MAX_HOPS = 4;
/** Greatest number of values of one `in` / `not_in`. */
export const MAX_IN_VALUES = 1000;
/** Greatest `n` of `in_last` / `in_next` (the window stays within the dates PostgreSQL holds). */
export const MAX_RELATIVE = 10_000;
/** Greatest number of conditions in one filter. */
export const MAX_CONDITIONS = 500;

export const OPERATORS = [
  'is',
  'is_not',
  'in',
  'not_in',
  'less_than',
  'greater_than',
  'less_or_equal',
  'greater_or_equal',
  'between',
  'not_between',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
  'type_is',
  'type_is_not',
  'in_last',
  'in_next',
] as const;
export type Operator = (typeof OPERATORS)[number];

export const UNITS: Record<string, string> = { HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' };

export const FIELD_CODE = /^[a-z][a-z0-9_]{0,63}$/;
export const TYPE_CODE = /^[A-Z][A-Za-z0-9]{0,63}$/;
export const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const DATETIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/i;

/** Each negative operator and the positive one it negates. */
export const NEGATIVE: Partial<Record<Operator, Operator>> = {
  is_not: 'is',
  not_in: 'in',
  not_contains: 'contains',
  not_between: 'between',
  type_is_not: 'type_is',
};

/** Thrown internally for one problem; collected per condition so all problems are reported together. */
export class Refusal extends Error {
  constructor(readonly problem: Problem) {
    super(problem.msg);
  }
}

export const refuse = (loc: Loc, msg: string, type: string): never => {
  throw new Refusal({ loc, msg, type });
};

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The loc of the first string holding a NUL character inside `value` (PostgreSQL text cannot hold one). */
export function nulAt(value: unknown, loc: Loc): Loc | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? loc : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulAt(value[i], [...loc, i]);
      if (found) return found;
    }
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = nulAt(v, [...loc, k]) ?? (k.includes('\u0000') ? [...loc, k] : undefined);
      if (found) return found;
    }
  }
  return undefined;
}

/** True for `YYYY-MM-DD` naming a real calendar day of year 1 or later (PostgreSQL refuses the others). */
export function isRealDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(2000, mo - 1, d));
  date.setUTCFullYear(y);
  return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * The project a filter pins at its top level (`["project_id", "is", <uuid>]` in the root list or an
 * `all` group within it), lowercased; undefined when none.
 */
export function pinnedProject(filters: unknown): string | undefined {
  const items = Array.isArray(filters)
    ? filters
    : isPlainObject(filters) && filters.filter_operator === 'all' && Array.isArray(filters.filters)
      ? filters.filters
      : undefined;
  if (!items) return undefined;
  for (const item of items) {
    if (Array.isArray(item)) {
      if (item.length === 3 && item[0] === 'project_id' && item[1] === 'is' && typeof item[2] === 'string' && isUuid(item[2])) return item[2].toLowerCase();
    } else {
      const nested = pinnedProject(item);
      if (nested) return nested;
    }
  }
  return undefined;
}
