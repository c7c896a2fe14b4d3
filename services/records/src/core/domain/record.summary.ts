/**
 * POST /entities/{Type}/summarize (docs/api-notes.md, "Summaries"): aggregates over the live
 * records a filter matches, for the whole set and for up to three grouping levels, in ONE
 * statement (GROUP BY GROUPING SETS) on the query pool. The filter is compiled by the query
 * compiler (filter.compiler.ts), so it is validated and located exactly as a query's, and for a
 * caller who may not read every project it carries the same reader rule as a query's plan (the
 * summarized rows, every path of the filter, and the names of linked groups: a group of a record they
 * may not read keeps its stored link and no name).
 * Problems are located at `filters`, `summary_fields` and `grouping`; the gateway adds `body`.
 */
import { AppError, clipEcho, entityPolicy, isAppError, type CallContext, type Problem } from '@reelbase/lib-platform';
import { compileFilter, readerScope } from './filter.compiler.js';
import { FIELD_CODE, isPlainObject, QUERY_COLUMNS, type QueryColumn } from './filter.grammar.js';
import { COLUMN_KIND, FIELD_KIND, type ValueKind } from './filter.kinds.js';
import { linkIdExpr, literal, SQL_DATE_RE, SQL_DATETIME_RE, textFieldExpr } from './filter.sql.js';
import { checkEntityType } from '../../kernel/domain/record.rules.js';
import { SchemaCache, type CompiledSchema } from '../../kernel/domain/schema.snapshot.js';
import { entityTypeOf } from '../../kernel/domain/schema.validator.js';
import type { ReaderSql, SummaryRow, SummaryStatement, SummaryStore } from './core.ports.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';

export const { SUMMARY_TYPES, GROUPING_TYPES, MAX_GROUPING, MAX_SUMMARY_FIELDS } = entityPolicy;
export type SummaryType = (typeof SUMMARY_TYPES)[number];
export type GroupingType = (typeof GROUPING_TYPES)[number];
/**
 * Groups a summary answers at most, all levels together (docs/api-notes.md, "Summaries"): more is
 * a 422 at `grouping` (group by a coarser field, or narrow the filter), never an answer cut short.
 */
export const MAX_GROUPS = 10_000;

export interface SummarizeInput {
  entityType: string;
  filtersJson?: string;
  summaryFieldsJson: string;
  groupingJson?: string;
}

export interface SummaryGroup {
  group_name: string | null;
  group_value: unknown;
  summaries: Record<string, unknown>;
  groups?: SummaryGroup[];
}

export interface SummaryAnswer {
  summaries: Record<string, unknown>;
  groups: SummaryGroup[];
}

const NUMERIC: ReadonlySet<ValueKind> = new Set(['integer', 'float', 'duration']);
const DATED: ReadonlySet<ValueKind> = new Set(['date', 'datetime', 'timestamp']);
const ORDERED: ReadonlySet<ValueKind> = new Set([...NUMERIC, ...DATED, 'text', 'code', 'enum']);
const SCALAR: ReadonlySet<ValueKind> = new Set([...ORDERED, 'boolean', 'uuid']);
/** Which kinds each summary applies to (record_count: every field). */
const APPLIES: Record<SummaryType, ReadonlySet<ValueKind> | 'any'> = {
  record_count: 'any',
  count: 'any',
  sum: NUMERIC,
  average: NUMERIC,
  minimum: ORDERED,
  maximum: ORDERED,
  earliest: DATED,
  latest: DATED,
  status_list: SCALAR,
  percentage: 'any',
};

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
const DATE_FORMATS: Record<Exclude<GroupingType, 'exact'>, string> = {
  day: `'YYYY-MM-DD'`,
  week: `'IYYY-"W"IW'`,
  month: `'YYYY-MM'`,
  year: `'YYYY'`,
};

/** A field or column of the summarized type, with SQL over alias `r`. */
interface Operand {
  name: string;
  kind: ValueKind;
  /** Typed value (numeric, date, timestamptz, text, boolean), null when empty. */
  value: string;
  /** The stored value as jsonb (percentage compares with it). */
  json: string;
}

function operand(schema: CompiledSchema, entityType: string, name: unknown, loc: (string | number)[], problems: Problem[]): Operand | undefined {
  if (typeof name !== 'string' || name === '') {
    problems.push({ loc, msg: 'Input should be a field code', type: 'string_type' });
    return undefined;
  }
  if ((QUERY_COLUMNS as readonly string[]).includes(name)) {
    const col = name as QueryColumn;
    const kind = COLUMN_KIND[col];
    const value = kind === 'uuid' ? `r.${col}::text` : `r.${col}`;
    return { name, kind, value, json: `to_jsonb(r.${col})` };
  }
  const field = schema.version > 0 ? schema.entityTypes.get(entityType)?.fields.get(name) : undefined;
  if (!field || !FIELD_CODE.test(name)) {
    problems.push({ loc, msg: `${entityType} has no field '${clipEcho(name)}'`, type: 'unknown_field' });
    return undefined;
  }
  const kind = FIELD_KIND[field.type];
  const j = `r.data->${literal(name, FIELD_CODE)}`;
  let value: string;
  switch (kind) {
    case 'integer':
    case 'float':
    case 'duration':
      value = `(case when jsonb_typeof(${j}) = 'number' then (${j})::numeric end)`;
      break;
    case 'boolean':
      value = `(case when jsonb_typeof(${j}) = 'boolean' then (${j})::boolean end)`;
      break;
    case 'date':
      value = `(case when (${j}#>>'{}') ~ ${SQL_DATE_RE} then (${j}#>>'{}')::date end)`;
      break;
    case 'datetime':
      value = `(case when (${j}#>>'{}') ~ ${SQL_DATETIME_RE} then (${j}#>>'{}')::timestamptz end)`;
      break;
    case 'link':
      value = `${linkIdExpr('r', name)}::text`;
      break;
    case 'text':
    case 'enum':
      value = `nullif(${textFieldExpr('r', name)}, '')`;
      break;
    default:
      // multi_link, multi_enum, json: only whether it holds something.
      value = `(case when ${j} is null or jsonb_typeof(${j}) = 'null' or ${j} = '[]'::jsonb or ${j} = '{}'::jsonb then null else ${j} end)`;
  }
  return { name, kind, value, json: j };
}

/** A typed value as the JSON answer shows it (dates as ISO text). */
function outputSql(kind: ValueKind, expr: string): string {
  if (kind === 'date') return `to_char(${expr}, 'YYYY-MM-DD')`;
  if (kind === 'datetime' || kind === 'timestamp') return `to_char(${expr} at time zone 'UTC', ${ISO_UTC})`;
  return expr;
}

function parseJson(json: string | undefined, loc: string, problems: Problem[]): unknown {
  if (json === undefined || json === '') return undefined;
  try {
    return JSON.parse(json);
  } catch {
    problems.push({ loc: [loc], msg: 'Input should be valid JSON', type: 'json_invalid' });
    return undefined;
  }
}

interface Level {
  op: Operand;
  type: GroupingType;
  desc: boolean;
}

interface Planned {
  statement: SummaryStatement;
  summaries: { field: string; type: SummaryType; kind: ValueKind }[];
  levels: Level[];
}

/**
 * Checks the request against `schema` and writes its one statement; throws `invalid` with every
 * problem. With `reader` (a caller who may not read every project: membershipOf's user and the
 * reader rule's SQL) the statement summarizes only the records they may read.
 */
export function planSummary(schema: CompiledSchema, input: SummarizeInput, reader?: { userId: string; sql: ReaderSql }): Planned {
  const problems: Problem[] = [];
  const params: unknown[] = [input.entityType];
  const scope = reader && readerScope(params, reader.userId, reader.sql);
  const filters = parseJson(input.filtersJson, 'filters', problems);
  let filterSql = 'true';
  try {
    filterSql = compileFilter(schema, input.entityType, filters, params, undefined, scope).sql;
  } catch (err) {
    if (isAppError(err) && err.kind === 'invalid') problems.push(...err.problems);
    else throw err;
  }

  const rawSummaries = parseJson(input.summaryFieldsJson, 'summary_fields', problems);
  const summaries: Planned['summaries'] = [];
  const aggregates: string[] = [];
  const seen = new Set<string>();
  if (!Array.isArray(rawSummaries) || rawSummaries.length === 0 || rawSummaries.length > MAX_SUMMARY_FIELDS) {
    problems.push({ loc: ['summary_fields'], msg: `Input should be a list of 1 to ${MAX_SUMMARY_FIELDS} summaries`, type: 'list_type' });
  } else {
    rawSummaries.forEach((s, i) => {
      const at = (...loc: (string | number)[]) => ['summary_fields', i, ...loc];
      if (!isPlainObject(s)) {
        problems.push({ loc: at(), msg: 'Input should be a valid dictionary or object', type: 'dict_type' });
        return;
      }
      for (const key of Object.keys(s)) {
        if (!['field', 'type', 'value'].includes(key)) problems.push({ loc: at(key), msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      }
      const type = s.type as SummaryType;
      if (!SUMMARY_TYPES.includes(type)) {
        problems.push({ loc: at('type'), msg: `Input should be one of ${SUMMARY_TYPES.join(', ')}`, type: 'enum' });
      }
      const op = operand(schema, input.entityType, s.field, at('field'), problems);
      if (typeof s.field === 'string') {
        if (seen.has(s.field))
          problems.push({ loc: at('field'), msg: `'${clipEcho(s.field)}' already has a summary: one summary per field`, type: 'value_error' });
        seen.add(s.field);
      }
      if (type === 'percentage' && !Object.hasOwn(s, 'value')) problems.push({ loc: at('value'), msg: 'Field required for a percentage', type: 'missing' });
      if (type !== 'percentage' && Object.hasOwn(s, 'value'))
        problems.push({ loc: at('value'), msg: 'only a percentage takes a value', type: 'extra_forbidden' });
      if (!op || !SUMMARY_TYPES.includes(type)) return;
      const applies = APPLIES[type];
      if (applies !== 'any' && !applies.has(op.kind)) {
        problems.push({ loc: at('type'), msg: `a ${type} does not apply to '${op.name}' (${op.kind})`, type: 'value_error' });
        return;
      }
      const j = aggregates.length;
      let sql: string;
      switch (type) {
        case 'record_count':
          sql = 'count(*)';
          break;
        case 'count':
          sql = `count(${op.value})`;
          break;
        case 'sum':
          sql = `coalesce(sum(${op.value}), 0)`;
          break;
        case 'average':
          sql = `avg(${op.value})`;
          break;
        case 'minimum':
        case 'earliest':
          sql = outputSql(op.kind, `min(${op.value})`);
          break;
        case 'maximum':
        case 'latest':
          sql = outputSql(op.kind, `max(${op.value})`);
          break;
        case 'status_list': {
          const v = outputSql(op.kind, op.value);
          sql = `coalesce(array_to_json(array_agg(distinct ${v} order by ${v}) filter (where ${op.value} is not null)), '[]'::json)`;
          break;
        }
        default: {
          params.push(JSON.stringify(s.value ?? null));
          const matches = s.value === null ? `(${op.value} is null)` : `(${op.json} = $${params.length}::jsonb)`;
          sql = `coalesce(100.0 * count(*) filter (where ${matches}) / nullif(count(*), 0), 0)`;
        }
      }
      aggregates.push(`${sql} as a${j}`);
      summaries.push({ field: op.name, type, kind: op.kind });
    });
  }

  const rawGrouping = parseJson(input.groupingJson, 'grouping', problems);
  const levels: Level[] = [];
  if (rawGrouping !== undefined && rawGrouping !== null) {
    if (!Array.isArray(rawGrouping) || rawGrouping.length > MAX_GROUPING) {
      problems.push({ loc: ['grouping'], msg: `Input should be a list of at most ${MAX_GROUPING} levels`, type: 'list_type' });
    } else {
      rawGrouping.forEach((g, i) => {
        const at = (...loc: (string | number)[]) => ['grouping', i, ...loc];
        if (!isPlainObject(g)) {
          problems.push({ loc: at(), msg: 'Input should be a valid dictionary or object', type: 'dict_type' });
          return;
        }
        for (const key of Object.keys(g)) {
          if (!['field', 'type', 'direction'].includes(key)) problems.push({ loc: at(key), msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        }
        const type = (g.type ?? 'exact') as GroupingType;
        if (!GROUPING_TYPES.includes(type)) problems.push({ loc: at('type'), msg: `Input should be one of ${GROUPING_TYPES.join(', ')}`, type: 'enum' });
        const direction = g.direction ?? 'asc';
        if (direction !== 'asc' && direction !== 'desc') problems.push({ loc: at('direction'), msg: "Input should be 'asc' or 'desc'", type: 'literal_error' });
        const op = operand(schema, input.entityType, g.field, at('field'), problems);
        if (!op || !GROUPING_TYPES.includes(type)) return;
        if (type === 'exact' ? !(SCALAR.has(op.kind) || op.kind === 'link') : !DATED.has(op.kind)) {
          problems.push({ loc: at('type'), msg: `'${op.name}' (${op.kind}) cannot be grouped by ${type}`, type: 'value_error' });
          return;
        }
        levels.push({ op, type, desc: direction === 'desc' });
      });
    }
  }
  if (problems.length) throw AppError.invalid(problems);

  const keyCols: string[] = [];
  const sets: string[][] = [[]];
  levels.forEach((l, i) => {
    let key: string;
    if (l.type === 'exact') key = outputSql(l.op.kind, l.op.value);
    else {
      const ts = l.op.kind === 'date' ? l.op.value : `(${l.op.value} at time zone 'UTC')`;
      key = `to_char(${ts}, ${DATE_FORMATS[l.type]})`;
    }
    keyCols.push(`${key} as k${i}`);
    const cols = [`k${i}`];
    if (l.op.kind === 'link') {
      keyCols.push(`(r.data->${literal(l.op.name, FIELD_CODE)}->>'type') as t${i}`);
      cols.push(`t${i}`);
    }
    sets.push([...sets[sets.length - 1]!, ...cols]);
  });
  const grouped = sets[sets.length - 1]!;
  const where = `r.entity_type = $1::text and (${filterSql}) and r.retired_at is null${scope ? ` and ${scope.sql.readable('r', scope.probe)}` : ''}`;
  const inner = `select ${keyCols.length ? `${keyCols.join(', ')}, ` : ''}r.* from records.record r where ${where}`;
  const groupBy = levels.length ? `group by grouping sets (${sets.map((s) => `(${s.join(', ')})`).join(', ')})` : '';
  const gsql = levels.length ? `grouping(${grouped.join(', ')})::int as g, ${grouped.join(', ')}, ` : '0 as g, ';
  // One row per group and one for the whole set: reading one more than that says there are too many.
  const limit = levels.length ? ` limit ${MAX_GROUPS + 2}` : '';
  const sql = `select ${gsql}${aggregates.join(', ')} from (${inner}) r ${groupBy}${limit}`;
  return { statement: { sql, params }, summaries, levels };
}

/** A summary value as JSON: numeric text from PostgreSQL becomes a number. */
function summaryValue(type: SummaryType, kind: ValueKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'record_count' || type === 'count' || type === 'sum' || type === 'average' || type === 'percentage') return Number(v);
  if ((type === 'minimum' || type === 'maximum') && NUMERIC.has(kind)) return Number(v);
  if (type === 'status_list' && Array.isArray(v) && NUMERIC.has(kind)) return v.map(Number);
  return v;
}

/** Compares two group keys; `null` is handled by the caller (always last). */
function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

interface Node {
  key: unknown;
  type?: string;
  name: string | null;
  summaries: Record<string, unknown>;
  children: Map<string, Node>;
}

export class RecordSummaries {
  private readonly schemas: SchemaCache;

  constructor(private readonly store: SummaryStore) {
    this.schemas = new SchemaCache(() => store.loadSchema());
  }

  async summarize(input: SummarizeInput, ctx: CallContext): Promise<SummaryAnswer> {
    const p = ctx.principal;
    if (!p || p.role === 'Guest') throw new AppError('forbidden', 'summaries need a signed-in user');
    checkEntityType(input.entityType);
    const reader = membershipOf(p);
    let schema = await this.schemas.held();
    let planned: Planned;
    for (let attempt = 0; ; attempt++) {
      try {
        if (schema.version > 0) entityTypeOf(schema, input.entityType);
        planned = planSummary(schema, input, reader === null ? undefined : { userId: reader, sql: this.store.readers });
        break;
      } catch (err) {
        // A problem found against the held schema is confirmed against the stored one.
        if (attempt === 0 && isAppError(err) && (err.kind === 'invalid' || err.kind === 'not_found')) {
          const version = await this.store.schemaVersion();
          if (version !== schema.version) {
            schema = await this.schemas.at(version);
            continue;
          }
        }
        throw err;
      }
    }
    const rows = await this.store.summarize(planned.statement);
    if (rows.length > MAX_GROUPS + 1) {
      throw AppError.invalid([
        {
          loc: ['grouping'],
          msg: `this grouping makes more than ${MAX_GROUPS} groups: group by a coarser field (a link, a status, a month) or narrow the filters`,
          type: 'too_many_groups',
        },
      ]);
    }
    return this.answer(planned, rows, reader);
  }

  private async answer({ summaries, levels }: Planned, rows: SummaryRow[], reader: string | null): Promise<SummaryAnswer> {
    const values = (row: SummaryRow): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      summaries.forEach((s, j) => (out[s.field] = summaryValue(s.type, s.kind, row[`a${j}`])));
      return out;
    };
    const depthOf = (g: number): number => {
      // GROUPING sets a bit per grouped column that is NOT part of the row's set (first column = high bit).
      let cols = 0;
      let depth = 0;
      for (const l of levels) {
        cols += l.op.kind === 'link' ? 2 : 1;
        const total = levels.reduce((n, x) => n + (x.op.kind === 'link' ? 2 : 1), 0);
        const bit = 1 << (total - cols);
        if (g & bit) break;
        depth++;
      }
      return depth;
    };
    const keyOf = (row: SummaryRow, i: number): unknown => {
      const k = row[`k${i}`];
      if (k === null || k === undefined) return null;
      const l = levels[i]!;
      if (l.type === 'exact' && NUMERIC.has(l.op.kind)) return Number(k);
      return k;
    };
    const linkIds = new Set<string>();
    for (const row of rows) levels.forEach((l, i) => l.op.kind === 'link' && typeof row[`k${i}`] === 'string' && linkIds.add(row[`k${i}`] as string));
    const names = linkIds.size ? await this.store.namesOf([...linkIds], reader) : new Map<string, string | null>();

    const root: Node = { key: null, name: null, summaries: {}, children: new Map() };
    // Shallow rows first, so every parent exists before its children.
    const ordered = rows.map((row) => ({ row, depth: depthOf(Number(row.g ?? 0)) })).sort((a, b) => a.depth - b.depth);
    for (const { row, depth } of ordered) {
      let node = root;
      for (let i = 0; i < depth; i++) {
        const key = keyOf(row, i);
        const type = levels[i]!.op.kind === 'link' ? (row[`t${i}`] as string | null) : undefined;
        const id = JSON.stringify([key, type ?? null]);
        let child = node.children.get(id);
        if (!child) {
          const name = levels[i]!.op.kind === 'link' ? (key === null ? null : (names.get(key as string) ?? null)) : key === null ? null : String(key);
          child = { key, type: type ?? undefined, name, summaries: {}, children: new Map() };
          node.children.set(id, child);
        }
        node = child;
      }
      node.summaries = values(row);
    }
    const toGroups = (node: Node, i: number): SummaryGroup[] => {
      const level = levels[i]!;
      const link = level.op.kind === 'link';
      const list = [...node.children.values()].sort((a, b) => {
        if (a.key === null || b.key === null) return a.key === null ? (b.key === null ? 0 : 1) : -1;
        const c = link ? compareKeys(a.name ?? '', b.name ?? '') || compareKeys(a.key, b.key) : compareKeys(a.key, b.key);
        return level.desc ? -c : c;
      });
      return list.map((n) => {
        const group: SummaryGroup = {
          group_name: n.name,
          group_value: link && n.key !== null ? { type: n.type ?? null, id: n.key } : n.key,
          summaries: n.summaries,
        };
        if (i + 1 < levels.length) group.groups = toGroups(n, i + 1);
        return group;
      });
    };
    const emptySummaries = values({});
    return {
      summaries: rows.length ? root.summaries : emptySummaries,
      groups: levels.length ? toGroups(root, 0) : [],
    };
  }
}
