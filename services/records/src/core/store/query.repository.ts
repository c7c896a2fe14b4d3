/**
 * The statement of a query (domain/record.query.ts): the plan's predicate, order and limit over
 * `records.record r`, and the count of every match when asked. The plan numbers its parameters
 * `$1..$n`; they are handed to the driver as bound values, never written into the SQL.
 *
 * Each row leaves PostgreSQL as the record's client form, already JSON text
 * (docs/api-notes.md, Records; `json_build_object` keeps `data` as stored), so records and the
 * gateway splice it into the answer without parsing or re-serialising a record
 * (docs/queries.md, "The request path"). The same statement reads the stored schema version, so
 * a query needs no round trip of its own to learn it.
 *
 * A plan with link hops (domain/filter.compiler.ts, LinkHopOptions) starts its statements with the
 * hops' id-set CTEs and its page statement always answers one row at least (the page is a lateral
 * subquery of one row that also carries the schema version and whether a set passed the cap); when
 * one did, its rows are dropped and the plan's EXISTS form (`fallback`) runs instead
 * (docs/queries.md, "Link hops and the link table").
 */
import { sqlIsoMicros, type TextQueries } from '@reelbase/lib-platform';
import { SCHEMA_VERSION_SQL } from '../../kernel/store/schema.repository.js';
import type { QueryPlan, QueryRow } from '../domain/core.ports.js';
import { readableSql } from '../../kernel/store/project.readers.sql.js';

/** A statement with its bound values, as `pg` takes it. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** The record of row `r` in its client form (docs/api-notes.md, Records), `data` given as SQL. */
export function clientJsonSql(data: string): string {
  return `json_build_object('id', r.id, 'entity_type', r.entity_type, 'project_id', r.project_id, 'status', r.status,
    'active', r.active, 'thumbnail_id', r.thumbnail_id, 'created_by', r.created_by,
    'created_at', ${sqlIsoMicros('r.created_at')}, 'updated_at', ${sqlIsoMicros('r.updated_at')}, 'data', ${data})::text`;
}

/** How a page is read (QueryRepository decides). */
export interface PageOptions {
  /** Walk the page project by project over the projects the caller reads (plans with `readerProbe` only). */
  byProject?: boolean;
}

/**
 * A page walked project by project ("Readable projects first" on QueryRepository): the projects the
 * caller reads (`$2` is the membership probe), found once; the first `limit` rows of each, from the
 * project's own index range, and of the studio-wide rows (a Project row only when readable); the
 * page is the first `limit` of those, whose JSON alone is then built. The rows are those the plan's
 * `where` selects.
 */
function byProjectPage(plan: QueryPlan, select: string): string {
  const rest = `and ${plan.unscopedWhere} order by ${plan.orderBy} limit ${Number(plan.limit)}`;
  return `with rp as materialized (select hp.id from records.record hp where hp.entity_type = 'Project' and ${readableSql('hp', '$2')})
    ${select}, ${SCHEMA_VERSION_SQL} as v from (select r.* from (
      (select p.* from rp cross join lateral (select r.* from records.record r where r.project_id = rp.id ${rest}) p)
      union all
      (select r.* from records.record r where r.project_id is null and (r.entity_type <> 'Project' or r.id in (select id from rp)) ${rest})
    ) r order by ${plan.orderBy} limit ${Number(plan.limit)}) r order by ${plan.orderBy}`;
}

/** The statements of a page of `plan` (and of its count), as run by {@link QueryRepository}. */
export function queryStatements(plan: QueryPlan, options: PageOptions = {}): { page: Statement; count?: Statement } {
  const keys = plan.keys.map((k, i) => `(${k})::text as k${i}`).join(', ');
  const values = [...plan.params, ...plan.dataParams];
  const select = `select ${clientJsonSql(plan.data)} as j, ${keys}`;
  // With a driving id set the page walks the set's ids joined by primary key: the predicate still
  // holds every condition, and ordered by `id` (the usual order) the walk is sorted ids with a
  // stop at the limit, instead of every match fetched and sorted (docs/queries.md, "Link hops and
  // the link table").
  const from =
    plan.ctes?.length && plan.driver ? `unnest((select ids from ${plan.driver})) hop_ids(id) join records.record r on r.id = hop_ids.id` : 'records.record r';
  const rows = `from ${from}
      where ${plan.where}
      order by ${plan.orderBy}
      limit ${Number(plan.limit)}`;
  let page: Statement;
  let count: Statement | undefined;
  if (plan.ctes?.length) {
    const ctes = `with ${plan.ctes.join(',\n')}\n`;
    // The record's JSON is built above the lateral page, so only for the rows of the page, not for
    // every match the page is sorted from (a hop's matches come as a set, not in id order).
    const keyCols = plan.keys.map((_, i) => `r.k${i}`).join(', ');
    page = {
      text: `${ctes}select case when r.id is null then null else ${clientJsonSql(plan.data)} end as j, ${keyCols},
         ${SCHEMA_VERSION_SQL} as v, ${plan.overCap ?? 'false'} as o
       from (select 1) one left join lateral (select r.*, ${keys} ${rows}) r on true`,
      values,
    };
    if (plan.includeTotal) {
      count = { text: `${ctes}select count(*)::bigint as n, ${plan.overCap ?? 'false'} as o from records.record r where ${plan.where}`, values: plan.params };
    }
  } else {
    const byProject = options.byProject && plan.unscopedWhere !== undefined;
    page = { text: byProject ? byProjectPage(plan, select) : `${select}, ${SCHEMA_VERSION_SQL} as v ${rows}`, values };
    if (plan.includeTotal) count = { text: `select count(*)::bigint as n from records.record r where ${plan.where}`, values: plan.params };
  }
  return count ? { page, count } : { page };
}

type PageRow = { j: string | null; v: string; o?: boolean } & Record<string, string | null>;

/** What runs a statement: the query pool (lib-platform's `textQueries` over it), or one client of it. */
export type Queryable = TextQueries;

/** The result of a query's statements. */
export interface QueryOutcome {
  rows: QueryRow[];
  schemaVersion: number;
  total?: number;
}

/**
 * Runs the statements of `plan` on `db`, in order: the page, then the count when asked; for a plan
 * with link hops whose page reports an id set past the cap, the same for its `fallback` instead.
 * The service and the bench's raw figures both run queries through this function.
 * `trace`, when given, receives every statement run, in order.
 */
export async function runQueryPlan(db: Queryable, plan: QueryPlan, trace?: Statement[], options: PageOptions = {}): Promise<QueryOutcome> {
  const { page, count } = queryStatements(plan, options);
  trace?.push(page);
  const res = await db.query<PageRow>(page.text, page.values);
  if (plan.ctes?.length && res.rows[0]?.o) {
    // A hop's id set passed the cap: the answer is the EXISTS form's (same order, keys and limit).
    return runQueryPlan(db, { ...plan.fallback!, limit: plan.limit }, trace, options);
  }
  const arity = plan.keys.length;
  const rows: QueryRow[] = [];
  for (const r of res.rows) {
    if (r.j === null) continue; // the one row of an empty page with hops: version and cap flag only
    const keys: (string | null)[] = [];
    for (let i = 0; i < arity; i++) keys.push(r[`k${i}`] ?? null);
    rows.push({ json: r.j, keys });
  }
  const schemaVersion = res.rows.length > 0 ? Number(res.rows[0]!.v) : Number((await db.query<{ v: string }>(`select ${SCHEMA_VERSION_SQL} as v`)).rows[0]!.v);
  if (!count) return { rows, schemaVersion };
  trace?.push(count);
  let c = await db.query<{ n: string; o?: boolean }>(count.text, count.values);
  if (c.rows[0]!.o) {
    // Past the cap at the count (a write between the two statements): the EXISTS form's count.
    const again = queryStatements({ ...plan.fallback!, limit: plan.limit }).count!;
    trace?.push(again);
    c = await db.query<{ n: string }>(again.text, again.values);
  }
  return { rows, schemaVersion, total: Number(c.rows[0]!.n) };
}

/** Most projects a caller may read for its pages to be walked project by project. */
export const BY_PROJECT_MAX = 64;
/** How long a caller's count of readable projects decides its plans (ms); the rule itself is in every statement. */
const READABLE_COUNT_MS = 5_000;
/** Callers whose counts are held at most; past it the held counts are forgotten at once. */
const READABLE_COUNT_HELD = 10_000;

/**
 * Statements of queries.
 *
 * Readable projects first: a caller who may not read some restricted projects finds its page
 * among fewer rows than an Admin does (nine in ten hidden, say), so walking the type's rows in
 * order would read many rows for each one answered. When such a caller reads at most
 * {@link BY_PROJECT_MAX} projects, the page is read project by project instead, each project's
 * first rows from its own index range (docs/queries.md, "Restricted projects"). The count of the
 * projects a caller reads is held a few seconds; it only chooses the way, never the rows.
 */
export class QueryRepository {
  private readonly readableCounts = new Map<string, { readable: number; total: number; at: number }>();

  constructor(
    private readonly pool: Queryable,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs the page, then the count when asked (on the query pool: store/query.pool.ts). The schema
   * version is the one the page statement saw, or read on its own when the page is empty.
   */
  async query(plan: QueryPlan): Promise<QueryOutcome> {
    const byProject = plan.readerProbe !== undefined && (await this.fewReadable(plan.readerProbe));
    return runQueryPlan(this.pool, plan, undefined, { byProject });
  }

  /** Whether the caller of `probe` is kept out of some project and reads at most BY_PROJECT_MAX. */
  private async fewReadable(probe: string): Promise<boolean> {
    const at = this.now();
    let held = this.readableCounts.get(probe);
    if (!held || at - held.at > READABLE_COUNT_MS) {
      const rows = await this.pool.query<{ readable: number; total: number }>(
        `select count(*) filter (where ${readableSql('hp', '$1')})::int as readable, count(*)::int as total
           from records.record hp where hp.entity_type = 'Project'`,
        [probe],
      );
      if (this.readableCounts.size >= READABLE_COUNT_HELD) this.readableCounts.clear();
      held = { readable: rows.rows[0]!.readable, total: rows.rows[0]!.total, at };
      this.readableCounts.set(probe, held);
    }
    return held.readable < held.total && held.readable <= BY_PROJECT_MAX;
  }
}
