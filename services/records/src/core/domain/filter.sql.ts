/**
 * The SQL expressions of the filter compiler that the store's indexes and the link table's trigger
 * must repeat exactly (store/query.migration.ts, store/link.migration.ts), and the literal writer
 * every code goes through before it is written into SQL: only codes that match their pattern.
 */
import { FIELD_CODE, TYPE_CODE } from './filter.grammar.js';

/**
 * What the SQL checks before casting a stored string, so a value stored before its field had a type never fails a query.
 * Shared with the link table's trigger (store/link.migration.ts), so its rows hold exactly the ids the hops match.
 */
export const SQL_UUID_RE = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;
export const SQL_DATE_RE = `'^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$'`;
export const SQL_DATETIME_RE = `'^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9}){0,1}){0,1}(Z|z|[+-]([01]\\d|2[0-3]):{0,1}[0-5]\\d)$'`;

/** `'code'` as a SQL literal, for a code already checked against its pattern. */
export function literal(code: string, pattern: RegExp): string {
  if (!pattern.test(code)) throw new Error(`refusing to write ${JSON.stringify(code)} into SQL`);
  return `'${code}'`;
}

/**
 * The id a link field holds, as a uuid (null when it holds none). Shared with the expression
 * indexes of store/query.migration.ts: the planner uses an index only for the same expression.
 */
export function linkIdExpr(alias: string, field: string): string {
  const f = `${alias}.data->${literal(field, FIELD_CODE)}`;
  return `(case when (${f}->>'id') ~ ${SQL_UUID_RE} then (${f}->>'id')::uuid end)`;
}

/** A data field as text, only when it holds a string; shared with the trigram index of store/query.migration.ts. */
export function textFieldExpr(alias: string, field: string): string {
  const j = `${alias}.data->${literal(field, FIELD_CODE)}`;
  return `(case when jsonb_typeof(${j}) = 'string' then ${j}#>>'{}' end)`;
}

/** The `link` of records.record_link rows for field `field` of `type` (`[]` for the elements of a multi_link). */
export function linkKind(type: string, field: string, multi: boolean): string {
  return `${literal(type, TYPE_CODE).slice(1, -1)}.${literal(field, FIELD_CODE).slice(1, -1)}${multi ? '[]' : ''}`;
}

/** Escapes LIKE wildcards so a value matches only itself. */
export const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
