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
 * - For a caller who may not read every project (a `ReaderScope`), every record a path goes through
 *   must be one they may read (the reader rule, kernel/store/project.readers.sql.ts): a link into a
 *   project they may not read is as empty as a dead one (docs/queries.md, "Restricted projects").
 * Problems are located at `["filters", ...]`; the gateway adds the `body` head.
 */
import { AppError, type Problem } from '@reelbase/lib-platform';
import {
  isPlainObject,
  MAX_CONDITIONS,
  MAX_FILTER_DEPTH,
  MAX_HOPS,
  NEGATIVE,
  nulAt,
  OPERATORS,
  pinnedProject,
  QUERY_COLUMNS,
  Refusal,
  refuse,
  FIELD_CODE,
  TYPE_CODE,
  type Loc,
  type Operator,
  type QueryColumn,
} from './filter.grammar.js';
import { COLUMN_KIND, FIELD_KIND, type Target } from './filter.kinds.js';
import { predicate, type Binder } from './filter.operators.js';
import { linkIdExpr, linkKind, literal, SQL_UUID_RE } from './filter.sql.js';
import type { CompiledField, CompiledSchema } from '../../kernel/domain/schema.snapshot.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import type { ReaderSql } from './core.ports.js';

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

/**
 * Whose reading a statement is limited to: the placeholder (`$n`) the caller's membership probe is
 * bound at, and the reader rule's SQL (core.ports.ts, ReaderSql).
 */
export interface ReaderScope {
  probe: string;
  sql: ReaderSql;
}

/** Binds the membership probe of `userId` (membershipOf's user) as the next of `params`: the scope of its statement. */
export function readerScope(params: unknown[], userId: string, sql: ReaderSql): ReaderScope {
  params.push(membershipProbe(userId));
  return { probe: `$${params.length}`, sql };
}

/**
 * Compiles a query filter for records of `entityType`; parameters are numbered after
 * `params` (which it extends). With `reader`, a path goes only through records it may read (the
 * queried row's own condition is the caller's to add). Throws `invalid` with every problem found.
 */
export function compileFilter(
  schema: CompiledSchema,
  entityType: string,
  filters: unknown,
  params: unknown[] = [],
  linkHops?: LinkHopOptions,
  reader?: ReaderScope,
): CompiledFilter {
  const c = new FilterCompiler(schema, params, linkHops, reader);
  const sql = c.compileRoot(entityType, filters);
  if (c.problems.length > 0) throw AppError.invalid(c.problems);
  if (c.ctes.length === 0) return { sql, params };
  return { sql, params, ctes: c.ctes, overCap: `(${c.overCap.join(' or ')})`, driver: c.driver };
}

class FilterCompiler implements Binder {
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
    private readonly reader?: ReaderScope,
  ) {}

  /** ` and <row alias is readable>` for the reader, or nothing when the caller reads every project. */
  private readable(alias: string): string {
    return this.reader ? ` and ${this.reader.sql.readable(alias, this.reader.probe)}` : '';
  }

  bind(value: unknown, cast: string): string {
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
    const rest = predicate(this, this.target(type, segments[segments.length - 1]!, loc, inner), operator, cond, loc);
    const cap = this.linkHops!.cap;
    const chain = ++this.chains;
    const set = (i: number) => `lh${chain}_${i}`;
    const n = kinds.length;
    this.ctes.push(
      `${set(n)} as materialized (select array(select ${inner}.id from records.record ${inner}
        where ${inner}.entity_type = ${literal(type, TYPE_CODE)} and ${inner}.retired_at is null and ${rest}${this.readable(inner)} limit ${cap + 1}) as ids)`,
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
      // A link row carries its record's project (a Project's own links: none, the record is the
      // project), so the records a path goes through are the reader's without a visit to them. The
      // queried records' own hop (i = 0) needs none: the page's predicate holds the reader rule.
      const readable = i > 0 && this.reader ? ` and ${this.reader.sql.projectReadable('coalesce(l.project_id, l.from_id)', this.reader.probe)}` : '';
      this.ctes.push(
        `${set(i)} as materialized (select array(select ${distinct}l.from_id from records.record_link l
          where l.link = '${kinds[i]}' and ${into}${readable} limit ${cap + 1}) as ids)`,
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
      return predicate(this, this.target(entityType, name, loc, alias), operator, cond, loc);
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
    const exists = `exists (select 1 from records.record ${inner} where ${idMatch} and ${inner}.entity_type = ${literal(nextType, TYPE_CODE)} and ${inner}.retired_at is null and ${rest}${this.readable(inner)})`;
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
}
