/**
 * The query filter language (docs/api-notes.md, Queries) compiled to one parameterised SQL
 * predicate over `records.record`. Pure: it sees the compiled schema and the request, never the
 * database.
 *
 * - Every value is bound as `$n`. Field and type codes are written into the SQL only after they
 *   were found in the schema and match the code patterns (`^[a-z][a-z0-9_]{0,63}$`,
 *   `^[A-Z][A-Za-z0-9]{0,63}$`); columns come from a fixed list. Nothing of the request is spliced.
 * - Grammar: a list of items (all must hold) or `{"filter_operator": "all"|"any", "filters": [...]}`;
 *   an item is a condition `[path, operator, value]` (`[path, "between"|"not_between", low, high]`)
 *   or a group; groups nest to depth 8 (the top-level filter is depth 1).
 * - A path is a column, a field, or `field.Type.path` through a link or multi_link (at most 4 hops);
 *   a hop matches when any linked live record of that type matches the rest of the path.
 * - Negative operators (`is_not`, `not_in`, `not_contains`, `not_between`, `type_is_not`) are the
 *   negation of their positive form, so they also match records where the field is empty (or no
 *   linked record exists). `in []` matches nothing, `not_in []` everything.
 * - With no schema yet (version 0) only the record columns can be filtered.
 * Problems are located at `["filters", ...]`; the gateway adds the `body` head.
 */
import { AppError, isUuid, type Problem } from '@reelbase/lib-platform';
import type { CompiledField, CompiledSchema } from './schema.snapshot.js';

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
/**
 * Longest `contains` / `starts_with` / `ends_with` value matched with `ILIKE` (docs/queries.md,
 * "Long text values"). A longer one is matched with `strpos`/`starts_with`/`right` on `lower()`: the
 * trigram index's cost grows with the distinct trigrams of the pattern (15 s for 20,000 random
 * characters on 1,000,000 records) and `ILIKE` lowercases the pattern again for every row, while
 * `lower($n)` of a bound value is folded once when the statement is planned.
 */
export const LIKE_MAX_CHARS = 2048;

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

const UNITS: Record<string, string> = { HOUR: 'hour', DAY: 'day', WEEK: 'week', MONTH: 'month' };

const FIELD_CODE = /^[a-z][a-z0-9_]{0,63}$/;
const TYPE_CODE = /^[A-Z][A-Za-z0-9]{0,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/i;
/**
 * What the SQL checks before casting a stored string, so a value stored before its field had a type never fails a query.
 * Shared with the link table's trigger (store/link.migration.ts), so its rows hold exactly the ids the hops match.
 */
export const SQL_UUID_RE = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;
const SQL_DATE_RE = `'^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$'`;
const SQL_DATETIME_RE = `'^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9}){0,1}){0,1}(Z|z|[+-]([01]\\d|2[0-3]):{0,1}[0-5]\\d)$'`;

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

/** What a path ends on: a column or a data field, with the type that decides its operators. */
type ValueKind =
  | 'uuid'
  | 'code'
  | 'boolean'
  | 'timestamp'
  | 'text'
  | 'integer'
  | 'float'
  | 'date'
  | 'datetime'
  | 'enum'
  | 'multi_enum'
  | 'link'
  | 'multi_link'
  | 'json'
  | 'duration';

interface Target {
  /** Table alias the predicate is written over. */
  alias: string;
  kind: ValueKind;
  /** Column name, or undefined for a data field. */
  column?: QueryColumn;
  /** Data field code. */
  field?: string;
}

const COLUMN_KIND: Record<QueryColumn, ValueKind> = {
  id: 'uuid',
  project_id: 'uuid',
  created_by: 'uuid',
  thumbnail_id: 'uuid',
  status: 'code',
  entity_type: 'code',
  active: 'boolean',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

const FIELD_KIND: Record<string, ValueKind> = {
  text: 'text',
  url: 'text',
  color: 'text',
  integer: 'integer',
  float: 'float',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
  enum: 'enum',
  multi_enum: 'multi_enum',
  link: 'link',
  multi_link: 'multi_link',
  json: 'json',
  duration: 'duration',
};

const EQUALITY: Operator[] = ['is', 'is_not', 'in', 'not_in'];
const ORDER: Operator[] = ['less_than', 'greater_than', 'less_or_equal', 'greater_or_equal'];
const RANGE: Operator[] = ['between', 'not_between'];
const TEXT: Operator[] = ['contains', 'not_contains', 'starts_with', 'ends_with'];
const RELATIVE: Operator[] = ['in_last', 'in_next'];

/** The operators each kind accepts. */
const KIND_OPERATORS: Record<ValueKind, ReadonlySet<Operator>> = {
  uuid: new Set(EQUALITY),
  code: new Set([...EQUALITY, ...ORDER, ...TEXT]),
  boolean: new Set(EQUALITY),
  timestamp: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  text: new Set([...EQUALITY, ...ORDER, ...TEXT]),
  integer: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  float: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  duration: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  date: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  datetime: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  enum: new Set(EQUALITY),
  multi_enum: new Set(EQUALITY),
  link: new Set([...EQUALITY, 'type_is', 'type_is_not']),
  multi_link: new Set([...EQUALITY, 'type_is', 'type_is_not']),
  json: new Set(['is', 'is_not']),
};

const NEGATIVE: Partial<Record<Operator, Operator>> = {
  is_not: 'is',
  not_in: 'in',
  not_contains: 'contains',
  not_between: 'between',
  type_is_not: 'type_is',
};

const COMPARE: Partial<Record<Operator, string>> = { less_than: '<', greater_than: '>', less_or_equal: '<=', greater_or_equal: '>=' };

/** A filter compiled to a predicate: `sql` refers to the queried row as `r` and to `params` as `$1..$n`. */
export interface CompiledFilter {
  sql: string;
  params: unknown[];
  /**
   * With `linkHops`: the materialized CTEs (`name as materialized (select array(...) as ids)`) the
   * predicate reads its link hops' id sets from, and a SQL expression that is true when one of those
   * sets holds more than the cap (its ids were cut: the predicate's answer is not the filter's).
   */
  ctes?: string[];
  overCap?: string;
  /**
   * The CTE whose `ids` hold every id that can match (the queried type's set of the first hop path;
   * every such path must hold, so each of its sets is a superset of the matches).
   */
  driver?: string;
}

/**
 * How positive link hops are compiled (docs/queries.md, "Link hops and the link table"). Without it
 * every hop is an EXISTS over records.record. With it, a positive hop path at the top level of the
 * filter (in the root list or in `all` groups within it, not under `any`, not negated) is compiled
 * innermost-first: the ids of the live records of the last type matching the rest of the path, then
 * each hop outwards through records.record_link, each set a materialized array of at most `cap` + 1
 * ids, and the queried record's own hop as `r.id in (<its link rows into that set>)`. The link table
 * holds live records only: use it only when the query reads live records.
 */
export interface LinkHopOptions {
  /** Greatest size of one id set; a query whose set passes it must be answered another way (`overCap`). */
  cap: number;
}

/** Thrown internally for one problem; collected per condition so all problems are reported together. */
class Refusal extends Error {
  constructor(readonly problem: Problem) {
    super(problem.msg);
  }
}

const refuse = (loc: Loc, msg: string, type: string): never => {
  throw new Refusal({ loc, msg, type });
};

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `'code'` as a SQL literal, for a code already checked against its pattern. */
function literal(code: string, pattern: RegExp): string {
  if (!pattern.test(code)) throw new Error(`refusing to write ${JSON.stringify(code)} into SQL`);
  return `'${code}'`;
}

/** The loc of the first string holding a NUL character inside `value` (PostgreSQL text cannot hold one). */
function nulAt(value: unknown, loc: Loc): Loc | undefined {
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
function isRealDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(2000, mo - 1, d));
  date.setUTCFullYear(y);
  return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Escapes LIKE wildcards so a value matches only itself. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Compiles a query filter for records of `entityType`; parameters are numbered after
 * `params` (which it extends). Throws `invalid` with every problem found.
 */
export function compileFilter(schema: CompiledSchema, entityType: string, filters: unknown, params: unknown[] = [], linkHops?: LinkHopOptions): CompiledFilter {
  const c = new FilterCompiler(schema, params, linkHops);
  const sql = c.compileRoot(entityType, filters);
  if (c.problems.length > 0) throw AppError.invalid(c.problems);
  if (c.ctes.length === 0) return { sql, params };
  return { sql, params, ctes: c.ctes, overCap: `(${c.overCap.join(' or ')})`, driver: c.driver };
}

/** The `link` of records.record_link rows for field `field` of `type` (`[]` for the elements of a multi_link). */
export function linkKind(type: string, field: string, multi: boolean): string {
  return `${literal(type, TYPE_CODE).slice(1, -1)}.${literal(field, FIELD_CODE).slice(1, -1)}${multi ? '[]' : ''}`;
}

/**
 * The project a filter pins at its top level (`["project_id", "is", <uuid>]` in the root list or an
 * `all` group within it), lowercased; undefined when none.
 */
function pinnedProject(filters: unknown): string | undefined {
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

class FilterCompiler {
  readonly problems: Problem[] = [];
  /** The id-set CTEs of link hops (with `linkHops`), and the over-cap test of each. */
  readonly ctes: string[] = [];
  readonly overCap: string[] = [];
  /** The queried type's id set of the first hop path (CompiledFilter.driver). */
  driver: string | undefined;
  private conditions = 0;
  private aliases = 0;
  private chains = 0;
  private project: string | undefined;
  private projectParam: string | undefined;

  constructor(
    private readonly schema: CompiledSchema,
    private readonly params: unknown[],
    private readonly linkHops?: LinkHopOptions,
  ) {}

  private bind(value: unknown, cast: string): string {
    this.params.push(value);
    return `$${this.params.length}::${cast}`;
  }

  compileRoot(entityType: string, filters: unknown): string {
    if (filters === undefined || filters === null) return 'true';
    if (this.linkHops) this.project = pinnedProject(filters);
    return this.group(entityType, filters, ['filters'], 1, true);
  }

  /**
   * A list (all) or a `{filter_operator, filters}` object at depth `depth`; `top` when every one of
   * its items must hold for the whole filter to hold (the root, and `all` groups within top ones).
   */
  private group(entityType: string, value: unknown, loc: Loc, depth: number, top = false): string {
    if (depth > MAX_FILTER_DEPTH) {
      this.problems.push({ loc, msg: `Filter groups nest at most ${MAX_FILTER_DEPTH} deep`, type: 'too_deep' });
      return 'false';
    }
    let op: 'all' | 'any' = 'all';
    let items: unknown[];
    let itemsLoc = loc;
    if (Array.isArray(value)) {
      items = value;
    } else if (isPlainObject(value)) {
      let ok = true;
      for (const key of Object.keys(value)) {
        if (key !== 'filter_operator' && key !== 'filters') {
          this.problems.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
          ok = false;
        }
      }
      const fo = value.filter_operator;
      if (fo !== 'all' && fo !== 'any') {
        this.problems.push({ loc: [...loc, 'filter_operator'], msg: "Input should be 'all' or 'any'", type: 'literal_error' });
        ok = false;
      } else op = fo;
      if (!Array.isArray(value.filters)) {
        this.problems.push({ loc: [...loc, 'filters'], msg: 'Input should be a valid list', type: 'list_type' });
        return 'false';
      }
      if (!ok) return 'false';
      items = value.filters;
      itemsLoc = [...loc, 'filters'];
    } else {
      this.problems.push({ loc, msg: 'Input should be a list of conditions or a {"filter_operator", "filters"} group', type: 'list_type' });
      return 'false';
    }
    const parts = items.map((item, i) => this.item(entityType, item, [...itemsLoc, i], depth, top && op === 'all'));
    if (parts.length === 0) return op === 'all' ? 'true' : 'false';
    return `(${parts.join(op === 'all' ? ' and ' : ' or ')})`;
  }

  private item(entityType: string, item: unknown, loc: Loc, depth: number, top: boolean): string {
    if (isPlainObject(item)) return this.group(entityType, item, loc, depth + 1, top);
    if (!Array.isArray(item)) {
      this.problems.push({ loc, msg: 'Input should be a condition [path, operator, value] or a group', type: 'condition_type' });
      return 'false';
    }
    this.conditions += 1;
    if (this.conditions > MAX_CONDITIONS) {
      this.problems.push({ loc, msg: `A filter holds at most ${MAX_CONDITIONS} conditions`, type: 'too_long' });
      return 'false';
    }
    try {
      return this.condition(entityType, item, loc, top);
    } catch (err) {
      if (err instanceof Refusal) {
        this.problems.push(err.problem);
        return 'false';
      }
      throw err;
    }
  }

  private condition(entityType: string, cond: unknown[], loc: Loc, top: boolean): string {
    const [path, op] = cond;
    if (typeof path !== 'string') refuse([...loc, 0], 'Input should be a field path string', 'string_type');
    if (typeof op !== 'string' || !(OPERATORS as readonly string[]).includes(op)) {
      refuse([...loc, 1], `Input should be one of ${OPERATORS.map((o) => `'${o}'`).join(', ')}`, 'operator');
    }
    const operator = op as Operator;
    const ranged = operator === 'between' || operator === 'not_between' || operator === 'in_last' || operator === 'in_next';
    const arity = ranged ? 4 : 3;
    if (cond.length !== arity) {
      refuse(loc, `A '${operator}' condition has ${arity} items: [path, '${operator}', ${ranged ? 'a, b' : 'value'}]`, 'condition_length');
    }
    for (let i = 2; i < cond.length; i++) {
      const nul = nulAt(cond[i], [...loc, i]);
      if (nul) refuse(nul, 'Input should not contain the NUL character (\\u0000)', 'string_nul');
    }
    return this.path(entityType, path as string, operator, cond, loc, 'r', top);
  }

  /** Resolves `path` from `entityType` (row alias `alias`) and writes the predicate; hops become EXISTS. */
  private path(entityType: string, path: string, operator: Operator, cond: unknown[], loc: Loc, alias: string, top: boolean): string {
    const segments = path.split('.');
    if (segments.length % 2 === 0 || segments.some((s) => s === '')) {
      refuse([...loc, 0], `'${path}' is not a path: field or field.Type.field`, 'path');
    }
    const hops = (segments.length - 1) / 2;
    if (hops > MAX_HOPS) refuse([...loc, 0], `A path crosses at most ${MAX_HOPS} links`, 'path_too_long');
    if (this.linkHops && top && hops > 0 && alias === 'r' && !NEGATIVE[operator]) return this.linkPath(entityType, segments, operator, cond, loc);
    return this.walk(entityType, segments, operator, cond, loc, alias);
  }

  /** The field `name` of `entityType` a path goes on through to `nextType`: refused unless a link that can. */
  private hop(entityType: string, name: string, nextType: string, loc: Loc): CompiledField {
    const field = this.field(entityType, name, loc);
    if (field.type !== 'link' && field.type !== 'multi_link') {
      refuse([...loc, 0], `${entityType}.${name} is a ${field.type} field, not a link: a path can only go on through a link`, 'path_not_link');
    }
    if (!this.schema.entityTypes.has(nextType) || !TYPE_CODE.test(nextType)) {
      refuse([...loc, 0], `no entity type '${nextType}' in the schema`, 'path_type');
    }
    if (field.linkTypes.size > 0 && !field.linkTypes.has(nextType)) {
      refuse([...loc, 0], `${entityType}.${name} cannot link a ${nextType}`, 'path_type');
    }
    return field;
  }

  /**
   * A positive hop path at the top level, innermost first (LinkHopOptions): the same records as
   * walk()'s nested EXISTS for live queried records, as long as no set passes the cap.
   *   lh<c>_<n>: ids of live records of the last type matching the rest of the path;
   *   lh<c>_<i>: from_ids of the live records whose link of kind i is in lh<c>_<i+1> (i = 0: the
   *   queried type's, within the pinned project when there is one);
   *   the queried record: its id in lh<c>_0.
   */
  private linkPath(entityType: string, segments: string[], operator: Operator, cond: unknown[], loc: Loc): string {
    const kinds: string[] = [];
    let type = entityType;
    for (let i = 0; i + 1 < segments.length; i += 2) {
      const field = this.hop(type, segments[i]!, segments[i + 1]!, loc);
      kinds.push(linkKind(type, segments[i]!, field.type === 'multi_link'));
      type = segments[i + 1]!;
    }
    const inner = `h${++this.aliases}`;
    const rest = this.predicate(this.target(type, segments[segments.length - 1]!, loc, inner), operator, cond, loc);
    const cap = this.linkHops!.cap;
    const chain = ++this.chains;
    const set = (i: number) => `lh${chain}_${i}`;
    const n = kinds.length;
    this.ctes.push(
      `${set(n)} as materialized (select array(select ${inner}.id from records.record ${inner}
        where ${inner}.entity_type = ${literal(type, TYPE_CODE)} and ${inner}.retired_at is null and ${rest} limit ${cap + 1}) as ids)`,
    );
    for (let i = n - 1; i >= 0; i--) {
      // Within a pinned project (the queried record's own hop only): that project's links of the
      // kind, each tested against the next set hashed once. Otherwise: the links into the next set,
      // by index, one descent per id.
      const into =
        i === 0 && this.project !== undefined
          ? `l.project_id = ${(this.projectParam ??= this.bind(this.project, 'uuid'))} and (l.to_id in (select unnest(ids) from ${set(i + 1)})) is true`
          : `l.to_id = any((select ids from ${set(i + 1)})::uuid[])`;
      // A record holds one row per kind of a single link, so its from_ids are distinct; a multi_link may hold several of the set.
      const distinct = kinds[i]!.endsWith('[]') ? 'distinct ' : '';
      this.ctes.push(
        `${set(i)} as materialized (select array(select ${distinct}l.from_id from records.record_link l
          where l.link = '${kinds[i]}' and ${into} limit ${cap + 1}) as ids)`,
      );
    }
    for (let i = n; i >= 0; i--) this.overCap.push(`cardinality((select ids from ${set(i)})) > ${cap}`);
    this.driver ??= set(0);
    // The queried records by primary key: the planner takes the set for a few rows, which it is (at most the cap).
    return `r.id in (select unnest(ids) from ${set(0)})`;
  }

  private walk(entityType: string, segments: string[], operator: Operator, cond: unknown[], loc: Loc, alias: string): string {
    const [name, nextType] = segments as [string, string | undefined];
    if (nextType === undefined) {
      return this.predicate(this.target(entityType, name, loc, alias), operator, cond, loc);
    }
    const field = this.hop(entityType, name, nextType, loc);
    const positive = NEGATIVE[operator] ?? operator;
    const inner = `h${++this.aliases}`;
    const rest = this.walk(nextType, segments.slice(2), positive, cond, loc, inner);
    const fieldSql = `${alias}.data->${literal(name, FIELD_CODE)}`;
    const idMatch =
      field.type === 'link'
        ? `${inner}.id = ${linkIdExpr(alias, name)}`
        : `${inner}.id in (select (e->>'id')::uuid from jsonb_array_elements(case when jsonb_typeof(${fieldSql}) = 'array' then ${fieldSql} else '[]'::jsonb end) e
             where jsonb_typeof(e) = 'object' and (e->>'id') ~ ${SQL_UUID_RE})`;
    const exists = `exists (select 1 from records.record ${inner} where ${idMatch} and ${inner}.entity_type = ${literal(nextType, TYPE_CODE)} and ${inner}.retired_at is null and ${rest})`;
    return positive === operator ? exists : `not ${exists}`;
  }

  private field(entityType: string, name: string, loc: Loc): CompiledField {
    const type = this.schema.entityTypes.get(entityType);
    const field = type?.fields.get(name);
    if (!field || !FIELD_CODE.test(name)) {
      refuse(
        [...loc, 0],
        this.schema.version === 0 ? `no schema yet: only the record columns can be filtered, not '${name}'` : `${entityType} has no field '${name}'`,
        'unknown_field',
      );
    }
    return field!;
  }

  private target(entityType: string, name: string, loc: Loc, alias: string): Target {
    if ((QUERY_COLUMNS as readonly string[]).includes(name)) {
      const column = name as QueryColumn;
      return { alias, kind: COLUMN_KIND[column], column };
    }
    const field = this.field(entityType, name, loc);
    const kind = FIELD_KIND[field.type];
    if (!kind) refuse([...loc, 0], `${entityType}.${name} has a field type (${field.type}) that cannot be filtered`, 'operator_type');
    return { alias, kind: kind!, field: name };
  }

  /** The predicate of one condition on its target; negative operators negate the positive one. */
  private predicate(t: Target, operator: Operator, cond: unknown[], loc: Loc): string {
    if (!KIND_OPERATORS[t.kind].has(operator)) {
      const name = t.column ?? t.field!;
      refuse(
        [...loc, 1],
        `'${operator}' does not apply to ${name} (${t.kind === 'code' || t.kind === 'uuid' || t.kind === 'timestamp' ? 'column' : t.kind})`,
        'operator_type',
      );
    }
    const positive = NEGATIVE[operator];
    // Null (an absent field) must count as "no match" before it is negated. A positive predicate
    // stays bare: in a WHERE, AND/OR and EXISTS treat null as false already, and only a bare
    // `column = $n` or `data @> $n` matches an index (docs/queries.md, "Query indexes").
    if (positive) return `not coalesce(${this.positive(t, positive, cond, loc)}, false)`;
    return this.positive(t, operator, cond, loc);
  }

  private positive(t: Target, op: Operator, cond: unknown[], loc: Loc): string {
    const value = cond[2];
    const vloc: Loc = [...loc, 2];
    switch (op) {
      case 'is':
        return value === null ? this.empty(t) : this.equals(t, [this.scalar(t, value, vloc)], vloc);
      case 'in': {
        if (!Array.isArray(value)) return refuse(vloc, 'Input should be a valid list', 'list_type');
        if (value.length > MAX_IN_VALUES) return refuse(vloc, `At most ${MAX_IN_VALUES} values`, 'too_long');
        if (value.length === 0) return 'false';
        const values = value.map((v, i) => this.scalar(t, v, [...vloc, i]));
        const withNull = values.some((v) => v === null);
        const present = values.filter((v) => v !== null);
        const parts: string[] = [];
        if (present.length > 0) parts.push(this.equals(t, present, vloc));
        if (withNull) parts.push(this.empty(t));
        return parts.length === 1 ? parts[0]! : `(${parts.join(' or ')})`;
      }
      case 'less_than':
      case 'greater_than':
      case 'less_or_equal':
      case 'greater_or_equal': {
        const [expr, cast] = this.ordered(t);
        return `${expr} ${COMPARE[op]} ${this.bind(this.orderedValue(t, value, vloc), cast)}`;
      }
      case 'between': {
        const [expr, cast] = this.ordered(t);
        const low = this.bind(this.orderedValue(t, value, vloc), cast);
        const high = this.bind(this.orderedValue(t, cond[3], [...loc, 3]), cast);
        return `(${expr} between ${low} and ${high})`;
      }
      case 'contains':
      case 'starts_with':
      case 'ends_with': {
        if (typeof value !== 'string') return refuse(vloc, 'Input should be a valid string', 'string_type');
        if (value.length > LIKE_MAX_CHARS) {
          const field = `lower(${this.textExpr(t)})`;
          const v = `lower(${this.bind(value, 'text')})`;
          if (op === 'contains') return `strpos(${field}, ${v}) > 0`;
          if (op === 'starts_with') return `starts_with(${field}, ${v})`;
          return `right(${field}, char_length(${v})) = ${v}`;
        }
        const e = likeEscape(value);
        const pattern = op === 'contains' ? `%${e}%` : op === 'starts_with' ? `${e}%` : `%${e}`;
        return `${this.textExpr(t)} ilike ${this.bind(pattern, 'text')}`;
      }
      case 'type_is': {
        if (typeof value !== 'string' || !TYPE_CODE.test(value)) return refuse(vloc, 'Input should be an entity type code', 'entity_type');
        const key = literal(t.field!, FIELD_CODE);
        const probe = t.kind === 'link' ? { [key.slice(1, -1)]: { type: value } } : { [key.slice(1, -1)]: [{ type: value }] };
        return `${t.alias}.data @> ${this.bind(JSON.stringify(probe), 'jsonb')}`;
      }
      case 'in_last':
      case 'in_next': {
        const amount = value;
        const unit = cond[3];
        if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0 || amount > MAX_RELATIVE)
          return refuse(vloc, `Input should be a whole number from 0 to ${MAX_RELATIVE}`, 'int_type');
        if (typeof unit !== 'string' || !UNITS[unit]) return refuse([...loc, 3], "Input should be 'HOUR', 'DAY', 'WEEK' or 'MONTH'", 'literal_error');
        const span = `(${this.bind(amount, 'int')} * interval '1 ${UNITS[unit]}')`;
        if (t.kind === 'date') {
          const expr = this.ordered(t)[0];
          // Dates are whole days: the window runs from the day `span` ago (or today) to today (or the day `span` ahead).
          return op === 'in_last'
            ? `(${expr} between (current_date - ${span})::date and current_date)`
            : `(${expr} between current_date and (current_date + ${span})::date)`;
        }
        const expr = this.ordered(t)[0];
        return op === 'in_last' ? `(${expr} between now() - ${span} and now())` : `(${expr} between now() and now() + ${span})`;
      }
      default:
        return refuse([...loc, 1], `'${op}' cannot be used here`, 'operator');
    }
  }

  /** The SQL expression of a data field as jsonb. */
  private json(t: Target): string {
    return `${t.alias}.data->${literal(t.field!, FIELD_CODE)}`;
  }

  /** True when the target holds nothing: a null column, an absent or null field, an empty list. */
  private empty(t: Target): string {
    if (t.column) return `${t.alias}.${t.column} is null`;
    const j = this.json(t);
    if (t.kind === 'multi_enum' || t.kind === 'multi_link') return `(${j} is null or ${j} in ('null'::jsonb, '[]'::jsonb))`;
    return `(${j} is null or ${j} = 'null'::jsonb)`;
  }

  /** True when the target equals any of `values` (already checked; none null). */
  private equals(t: Target, values: unknown[], loc: Loc): string {
    if (t.column) {
      const cast = { uuid: 'uuid[]', code: 'text[]', boolean: 'boolean[]', timestamp: 'timestamptz[]' }[t.kind as 'uuid'];
      return values.length === 1
        ? `${t.alias}.${t.column} = ${this.bind(values[0], cast.slice(0, -2))}`
        : `${t.alias}.${t.column} = any(${this.bind(values, cast)})`;
    }
    if (t.kind === 'datetime') {
      const expr = this.ordered(t)[0];
      return values.length === 1 ? `${expr} = ${this.bind(values[0], 'timestamptz')}` : `${expr} = any(${this.bind(values, 'timestamptz[]')})`;
    }
    if (t.kind === 'json') {
      const j = this.json(t);
      return values.length === 1
        ? `${j} = ${this.bind(JSON.stringify(values[0]), 'jsonb')}`
        : `${j} = any(${this.bind(
            values.map((v) => JSON.stringify(v)),
            'jsonb[]',
          )})`;
    }
    // Containment on `data`: one shape for every stored type, and the shape a GIN index on data serves.
    const code = t.field!;
    literal(code, FIELD_CODE);
    const probes = values.map((v) => JSON.stringify({ [code]: t.kind === 'multi_enum' || t.kind === 'multi_link' ? [v] : v }));
    if (probes.length === 1) return `${t.alias}.data @> ${this.bind(probes[0], 'jsonb')}`;
    void loc;
    return `${t.alias}.data @> any(${this.bind(probes, 'jsonb[]')})`;
  }

  /** A value for is / in, checked against the target's kind; null stays null ("is empty"). */
  private scalar(t: Target, value: unknown, loc: Loc): unknown {
    if (value === null) return null;
    switch (t.kind) {
      case 'uuid':
        if (typeof value !== 'string' || !isUuid(value)) return refuse(loc, 'Input should be a valid UUID', 'uuid_parsing');
        return value.toLowerCase();
      case 'code':
      case 'text':
      case 'enum':
      case 'multi_enum':
        if (typeof value !== 'string') return refuse(loc, 'Input should be a valid string', 'string_type');
        return value;
      case 'boolean':
        if (typeof value !== 'boolean') return refuse(loc, 'Input should be a valid boolean', 'bool_type');
        return value;
      case 'integer':
      case 'float':
        if (typeof value !== 'number' || !Number.isFinite(value)) return refuse(loc, 'Input should be a valid number', 'float_type');
        return value;
      case 'duration':
        if (!(typeof value === 'number' && Number.isFinite(value)) && typeof value !== 'string')
          return refuse(loc, 'Input should be whole minutes or an ISO 8601 duration', 'duration_parsing');
        return value;
      case 'date':
        if (typeof value !== 'string' || !DATE.test(value) || !isRealDate(value))
          return refuse(loc, 'Input should be a valid date in the format YYYY-MM-DD', 'date_parsing');
        return value;
      case 'timestamp':
      case 'datetime':
        return this.datetime(value, loc);
      case 'link':
      case 'multi_link': {
        if (!isPlainObject(value) || typeof value.type !== 'string' || !TYPE_CODE.test(value.type) || typeof value.id !== 'string' || !isUuid(value.id)) {
          return refuse(loc, 'Input should be a link {"type", "id"}', 'link_type');
        }
        const extra = Object.keys(value).filter((k) => k !== 'type' && k !== 'id');
        if (extra.length > 0) return refuse([...loc, extra[0]!], 'Extra inputs are not permitted', 'extra_forbidden');
        return { type: value.type, id: value.id.toLowerCase() };
      }
      case 'json':
        return value;
    }
  }

  private datetime(value: unknown, loc: Loc): string {
    if (typeof value !== 'string' || !DATETIME.test(value) || !isRealDate(value))
      return refuse(loc, 'Input should be a valid ISO 8601 datetime with a time zone (Z or ±HH:MM)', 'datetime_parsing');
    return value;
  }

  /** The target as an ordered SQL value and the cast of values compared with it. */
  private ordered(t: Target): [string, string] {
    if (t.column) return [`${t.alias}.${t.column}`, t.kind === 'timestamp' ? 'timestamptz' : 'text'];
    const j = this.json(t);
    switch (t.kind) {
      case 'integer':
      case 'float':
      case 'duration':
        return [`(case when jsonb_typeof(${j}) = 'number' then (${j})::numeric end)`, 'numeric'];
      case 'date':
        return [`(case when (${j}#>>'{}') ~ ${SQL_DATE_RE} then (${j}#>>'{}')::date end)`, 'date'];
      case 'datetime':
        return [`(case when (${j}#>>'{}') ~ ${SQL_DATETIME_RE} then (${j}#>>'{}')::timestamptz end)`, 'timestamptz'];
      default:
        return [this.textExpr(t), 'text'];
    }
  }

  /** The target as text (only strings: a number stored in a text field is not text). */
  private textExpr(t: Target): string {
    if (t.column) return `${t.alias}.${t.column}`;
    return textFieldExpr(t.alias, t.field!);
  }

  /** A value for comparisons and between. */
  private orderedValue(t: Target, value: unknown, loc: Loc): unknown {
    switch (t.kind) {
      case 'integer':
      case 'float':
      case 'duration':
        if (typeof value !== 'number' || !Number.isFinite(value)) return refuse(loc, 'Input should be a valid number', 'float_type');
        return value;
      case 'date':
        if (typeof value !== 'string' || !DATE.test(value) || !isRealDate(value))
          return refuse(loc, 'Input should be a valid date in the format YYYY-MM-DD', 'date_parsing');
        return value;
      case 'timestamp':
      case 'datetime':
        return this.datetime(value, loc);
      default:
        if (typeof value !== 'string') return refuse(loc, 'Input should be a valid string', 'string_type');
        return value;
    }
  }
}
