/**
 * Queries over records (docs/api-notes.md, Queries): the filter compiled by filter.compiler.ts,
 * `fields` projection, `order` on columns and data fields, `limit`, keyset cursors,
 * `include_total` and `include_retired` (Admin only).
 *
 * Pages are keyset pages: every order ends with `id` (UUID v7, unique), the cursor holds the last
 * row's order values and id, and the next page is the rows strictly after it in that order. A
 * record inserted while a client pages never shifts the rows already seen or still to come, so
 * each record that existed when paging began is returned exactly once.
 *
 * A caller who may not read every project (membershipOf) gets the reader rule in the plan's `where`
 * and along every path of its filter (docs/queries.md, "Restricted projects"): their pages, totals
 * and cursors are over the records they may read. Everyone else's plan is the one it always was.
 */
import { AppError, clipEcho, entityPolicy, isAppError, type CallContext, type Problem } from '@reelbase/lib-platform';
import { compileFilter, readerScope, type LinkHopOptions } from './filter.compiler.js';
import { QUERY_COLUMNS, type QueryColumn } from './filter.grammar.js';
import { SchemaCache, type CompiledSchema } from '../../kernel/domain/schema.snapshot.js';
import { entityTypeOf } from '../../kernel/domain/schema.validator.js';
import { checkEntityType } from '../../kernel/domain/record.rules.js';
import type { QueryPlan, QueryRow, ReaderSql, RecordQueryStore } from './core.ports.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';

export const { DEFAULT_LIMIT, MAX_LIMIT } = entityPolicy;
/**
 * Greatest number of ids in one id set of a link hop (docs/queries.md, "Link hops and the link
 * table"); a query with a larger set is answered by its EXISTS form instead.
 */
export const LINK_HOP_CAP = 10_000;

/** How planQuery compiles link hops. */
export interface PlanOptions {
  /** false: every hop as EXISTS (today's form, and the fallback). Default true. */
  linkHops?: boolean;
  /** The cap of each hop id set (LINK_HOP_CAP). */
  hopCap?: number;
  /** A caller who may not read every project: membershipOf's user and the reader rule's SQL. */
  reader?: { userId: string; sql: ReaderSql };
}
const { MAX_ORDER_KEYS } = entityPolicy;

export interface QueryOrder {
  field: string;
  direction: 'asc' | 'desc';
}

/** What QueryRecords asks for; `filtersJson` and `fieldsJson` are JSON text. */
export interface QueryInput {
  entityType: string;
  filtersJson?: string;
  fieldsJson?: string;
  order?: { field: string; direction?: string }[];
  limit?: number;
  cursor?: string;
  includeTotal?: boolean;
  includeRetired?: boolean;
}

export interface QueryResult {
  /** The page's records in their client form (docs/api-notes.md, Records), each as JSON text. */
  items: string[];
  nextCursor: string | null;
  total?: number;
}

/** Columns that are never null: they need no null flag in the order. */
const NOT_NULL: ReadonlySet<string> = new Set(['id', 'entity_type', 'active', 'created_at', 'updated_at']);
const COLUMN_CAST: Record<QueryColumn, string> = {
  id: 'uuid',
  project_id: 'uuid',
  created_by: 'uuid',
  thumbnail_id: 'uuid',
  status: 'text',
  entity_type: 'text',
  active: 'boolean',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
};
const SQL_DATETIME_RE = `'^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9}){0,1}){0,1}(Z|z|[+-]([01]\\d|2[0-3]):{0,1}[0-5]\\d)$'`;
const FIELD_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** An order key as SQL: the expression, the cast of its cursor value, and whether it may be null. */
interface OrderKey {
  expr: string;
  cast: string;
  nullable: boolean;
  desc: boolean;
}

function orderKey(schema: CompiledSchema, entityType: string, o: QueryOrder, loc: (string | number)[], problems: Problem[]): OrderKey | undefined {
  const desc = o.direction === 'desc';
  if ((QUERY_COLUMNS as readonly string[]).includes(o.field)) {
    const c = o.field as QueryColumn;
    return { expr: `r.${c}`, cast: COLUMN_CAST[c], nullable: !NOT_NULL.has(c), desc };
  }
  const field = schema.entityTypes.get(entityType)?.fields.get(o.field);
  if (!field || !FIELD_CODE.test(o.field)) {
    problems.push({ loc: [...loc, 'field'], msg: `${entityType} has no field or column '${clipEcho(o.field)}' to order by`, type: 'unknown_field' });
    return undefined;
  }
  const j = `r.data->'${o.field}'`;
  switch (field.type) {
    case 'integer':
    case 'float':
    case 'duration':
      return { expr: `(case when jsonb_typeof(${j}) = 'number' then (${j})::numeric end)`, cast: 'numeric', nullable: true, desc };
    case 'boolean':
      return { expr: `(case when jsonb_typeof(${j}) = 'boolean' then (${j})::boolean end)`, cast: 'boolean', nullable: true, desc };
    case 'datetime':
      return { expr: `(case when (${j}#>>'{}') ~ ${SQL_DATETIME_RE} then (${j}#>>'{}')::timestamptz end)`, cast: 'timestamptz', nullable: true, desc };
    case 'text':
    case 'url':
    case 'color':
    case 'enum':
    case 'date':
      // Dates are stored as YYYY-MM-DD, so their text order is their date order.
      return { expr: `(case when jsonb_typeof(${j}) = 'string' then ${j}#>>'{}' end)`, cast: 'text', nullable: true, desc };
    default:
      problems.push({ loc: [...loc, 'field'], msg: `${entityType}.${o.field} is a ${field.type} field: it cannot order results`, type: 'order_type' });
      return undefined;
  }
}

/** The cursor's content: the last row's key texts and a fingerprint of the order it belongs to. */
interface CursorBody {
  k: (string | null)[];
  o: string;
}

const orderFingerprint = (entityType: string, order: QueryOrder[]) => JSON.stringify([entityType, order.map((o) => [o.field, o.direction])]);

export function encodeCursor(body: CursorBody): string {
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string, fingerprint: string, arity: number): CursorBody {
  const bad = () =>
    AppError.invalid([{ loc: ['cursor'], msg: 'Invalid cursor: pass the next_cursor of the previous page of this same query', type: 'cursor' }]);
  let body: unknown;
  try {
    if (!/^[A-Za-z0-9_-]*$/.test(cursor) || cursor.length > 16_384) throw bad();
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const b = body as CursorBody;
  if (
    typeof body !== 'object' ||
    body === null ||
    b.o !== fingerprint ||
    !Array.isArray(b.k) ||
    b.k.length !== arity ||
    !b.k.every((v) => v === null || typeof v === 'string')
  ) {
    throw bad();
  }
  return b;
}

type Planned = { plan: QueryPlan; fields: string[] | undefined; fingerprint: string };

/**
 * Builds the plan of a query (pure): the filter, the order with `id` last, the keyset condition
 * after `cursor`. Throws `invalid` with every problem of the request.
 *
 * Positive link hops at the top level of the filter run innermost-first over the link table when the
 * query reads live records only (not `include_retired`); the plan then carries its EXISTS form as
 * `fallback`. Problems are always those of the EXISTS form, which is compiled first.
 */
export function planQuery(schema: CompiledSchema, input: QueryInput, options: PlanOptions = {}): Planned {
  const exists = buildPlan(schema, input, undefined, options.reader);
  if (options.linkHops === false || input.includeRetired) return exists;
  const linked = buildPlan(schema, input, { cap: options.hopCap ?? LINK_HOP_CAP }, options.reader);
  if (!linked.plan.ctes) return exists;
  return { ...linked, plan: { ...linked.plan, fallback: exists.plan } };
}

function buildPlan(schema: CompiledSchema, input: QueryInput, linkHops?: LinkHopOptions, reader?: PlanOptions['reader']): Planned {
  const problems: Problem[] = [];
  const params: unknown[] = [input.entityType];
  // The membership probe is bound once, as $2; the main row's condition and the filter's paths share it.
  const scope = reader && readerScope(params, reader.userId, reader.sql);
  let filters: unknown;
  if (input.filtersJson !== undefined && input.filtersJson !== '') {
    try {
      filters = JSON.parse(input.filtersJson);
    } catch {
      problems.push({ loc: ['filters'], msg: 'Input should be valid JSON', type: 'json_invalid' });
    }
  }
  let filterSql = 'true';
  let hops: { ctes?: string[]; overCap?: string; driver?: string } = {};
  try {
    const compiled = compileFilter(schema, input.entityType, filters, params, linkHops, scope);
    filterSql = compiled.sql;
    if (compiled.ctes) hops = { ctes: compiled.ctes, overCap: compiled.overCap!, ...(compiled.driver ? { driver: compiled.driver } : {}) };
  } catch (err) {
    if (err instanceof AppError && err.kind === 'invalid') problems.push(...err.problems);
    else throw err;
  }

  let fields: string[] | undefined;
  if (input.fieldsJson !== undefined && input.fieldsJson !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.fieldsJson);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed)) problems.push({ loc: ['fields'], msg: 'Input should be a valid list', type: 'list_type' });
    else {
      fields = [];
      parsed.forEach((f, i) => {
        if (typeof f !== 'string') problems.push({ loc: ['fields', i], msg: 'Input should be a valid string', type: 'string_type' });
        else if ((QUERY_COLUMNS as readonly string[]).includes(f))
          return; // columns are always returned
        else if (schema.version > 0 && !schema.entityTypes.get(input.entityType)?.fields.has(f))
          problems.push({ loc: ['fields', i], msg: `${input.entityType} has no field '${clipEcho(f)}'`, type: 'unknown_field' });
        else fields!.push(f);
      });
    }
  }

  const order: QueryOrder[] = [];
  const keys: OrderKey[] = [];
  const requested = input.order ?? [];
  if (requested.length > MAX_ORDER_KEYS) problems.push({ loc: ['order'], msg: `At most ${MAX_ORDER_KEYS} order keys`, type: 'too_long' });
  requested.slice(0, MAX_ORDER_KEYS).forEach((o, i) => {
    const direction = o.direction ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') {
      problems.push({ loc: ['order', i, 'direction'], msg: "Input should be 'asc' or 'desc'", type: 'literal_error' });
      return;
    }
    if (o.field === 'id') return; // id always ends the order; an explicit one only sets its direction
    const key = orderKey(schema, input.entityType, { field: o.field, direction }, ['order', i], problems);
    if (key) {
      order.push({ field: o.field, direction });
      keys.push(key);
    }
  });
  const idEntry = requested.find((o) => o.field === 'id');
  const idDesc = idEntry ? idEntry.direction === 'desc' : (keys[keys.length - 1]?.desc ?? false);
  order.push({ field: 'id', direction: idDesc ? 'desc' : 'asc' });
  keys.push({ expr: 'r.id', cast: 'uuid', nullable: false, desc: idDesc });

  const limit = input.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    problems.push({ loc: ['limit'], msg: `Input should be between 1 and ${MAX_LIMIT}`, type: 'limit' });
  }
  const fingerprint = orderFingerprint(input.entityType, order);
  let cursor: CursorBody | undefined;
  if (input.cursor !== undefined && input.cursor !== '') {
    try {
      cursor = decodeCursor(input.cursor, fingerprint, keys.length);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'invalid') problems.push(...err.problems);
      else throw err;
    }
  }
  if (problems.length > 0) throw AppError.invalid(problems);

  // Each nullable key orders as (is null, value): nulls last ascending, first descending.
  const sorted: { expr: string; cast: string; desc: boolean; fromKey: number; isFlag: boolean }[] = [];
  keys.forEach((k, i) => {
    if (k.nullable) sorted.push({ expr: `(${k.expr} is null)`, cast: 'boolean', desc: k.desc, fromKey: i, isFlag: true });
    sorted.push({ expr: k.expr, cast: k.cast, desc: k.desc, fromKey: i, isFlag: false });
  });
  const where = [`r.entity_type = $1::text`, `(${filterSql})`];
  if (!input.includeRetired) where.push('r.retired_at is null');
  const scopeAt = where.length;
  if (scope) where.push(scope.sql.readable('r', scope.probe));
  if (cursor) {
    const values = sorted.map((s) => {
      const text = cursor!.k[s.fromKey]!;
      if (s.isFlag) return text === null ? 'true' : 'false';
      return text === null ? 'null' : bindAs(params, text, s.cast);
    });
    // Rows after the cursor: the first key that differs is on the far side of it.
    const ors: string[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const eq = sorted.slice(0, i).map((s, j) => `${s.expr} is not distinct from ${values[j]}`);
      const s = sorted[i]!;
      if (values[i] === 'null') continue; // nothing is after a null within its flag group
      eq.push(`${s.expr} ${s.desc ? '<' : '>'} ${values[i]}`);
      ors.push(`(${eq.join(' and ')})`);
    }
    where.push(ors.length > 0 ? `(${ors.join(' or ')})` : 'false');
    // The same condition's bound on the first key, which an index on that key can start from
    // (each branch above has the first key equal to, or past, the cursor's).
    const first = sorted[0]!;
    if (sorted.length > 1 && !first.isFlag && values[0] !== 'null') where.push(`${first.expr} ${first.desc ? '<=' : '>='} ${values[0]}`);
  }
  // `fields`: `data` holding only those keys (every column is always returned); its parameter
  // follows those of the predicate, which the count statement binds alone.
  const data =
    fields === undefined
      ? 'r.data'
      : `coalesce((select jsonb_object_agg(f.key, f.value) from jsonb_each(r.data) f where f.key = any($${params.length + 1}::text[])), '{}'::jsonb)`;
  return {
    plan: {
      where: where.join(' and '),
      data,
      dataParams: fields === undefined ? [] : [fields],
      params,
      keys: keys.map((k) => k.expr),
      orderBy: sorted.map((s) => `${s.expr} ${s.desc ? 'desc' : 'asc'}`).join(', '),
      limit,
      includeTotal: input.includeTotal === true,
      ...hops,
      ...(scope && !hops.ctes ? { readerProbe: params[1] as string, unscopedWhere: where.filter((_, i) => i !== scopeAt).join(' and ') } : {}),
    },
    fields,
    fingerprint,
  };
}

function bindAs(params: unknown[], text: string, cast: string): string {
  params.push(text);
  return `$${params.length}::${cast}`;
}

export class RecordQueries {
  private readonly schemas: SchemaCache;

  constructor(private readonly store: RecordQueryStore) {
    this.schemas = new SchemaCache(() => store.loadSchema());
  }

  /**
   * Runs a query for any authenticated caller; `includeRetired` is for Admins only (403).
   *
   * The query is planned against the schema held in memory and its statement reads the stored
   * version: when that differs (a field added or changed a moment ago), the schema is reloaded and
   * the query planned and run again, so a query always answers by the schema PostgreSQL holds. A
   * problem found against the held schema is confirmed the same way before it is answered.
   */
  async query(input: QueryInput, ctx: CallContext): Promise<QueryResult> {
    const p = ctx.principal;
    if (!p || p.role === 'Guest') throw new AppError('forbidden', 'queries need a signed-in user');
    if (input.includeRetired && p.role !== 'Admin' && p.authKind !== 'service') {
      throw new AppError('forbidden', 'only an Admin may include retired records');
    }
    checkEntityType(input.entityType);
    const reader = membershipOf(p);
    const options: PlanOptions = reader === null ? {} : { reader: { userId: reader, sql: this.store.readers } };
    let schema = await this.schemas.held();
    for (let attempt = 0; ; attempt++) {
      const last = attempt > 0;
      let planned: ReturnType<typeof planQuery>;
      try {
        if (schema.version > 0) entityTypeOf(schema, input.entityType);
        planned = planQuery(schema, input, options);
      } catch (err) {
        if (!last && isAppError(err) && (err.kind === 'invalid' || err.kind === 'not_found')) {
          const version = await this.store.schemaVersion();
          if (version !== schema.version) {
            schema = await this.schemas.at(version);
            continue;
          }
        }
        throw err;
      }
      const { plan, fingerprint } = planned;
      const { rows, schemaVersion, total } = await this.store.query({ ...plan, limit: plan.limit + 1 });
      if (!last && schemaVersion !== schema.version) {
        schema = await this.schemas.at(schemaVersion);
        continue;
      }
      const page = rows.slice(0, plan.limit);
      const lastRow = page[page.length - 1];
      const nextCursor = rows.length > plan.limit && lastRow ? encodeCursor({ k: lastRow.keys, o: fingerprint }) : null;
      return {
        items: page.map((r) => r.json),
        nextCursor,
        ...(plan.includeTotal ? { total: total ?? 0 } : {}),
      };
    }
  }
}
