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
 */
import { sqlIsoMicros } from '@reelbase/lib-platform';
import type { QueryPlan, QueryRow } from '../domain/record.query.js';
import type { QueryPool } from './query.pool.js';
import { SCHEMA_VERSION_SQL } from './schema.repository.js';

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

/** The statements of a page of `plan` (and of its count), as run by {@link QueryRepository}. */
export function queryStatements(plan: QueryPlan): { page: Statement; count?: Statement } {
  const keys = plan.keys.map((k, i) => `(${k})::text as k${i}`).join(', ');
  const page = {
    text: `select ${clientJsonSql(plan.data)} as j, ${keys}, ${SCHEMA_VERSION_SQL} as v
       from records.record r
      where ${plan.where}
      order by ${plan.orderBy}
      limit ${Number(plan.limit)}`,
    values: [...plan.params, ...plan.dataParams],
  };
  if (!plan.includeTotal) return { page };
  return { page, count: { text: `select count(*)::bigint as n from records.record r where ${plan.where}`, values: plan.params } };
}

type PageRow = { j: string; v: string } & Record<string, string | null>;

/** Statements of queries. */
export class QueryRepository {
  /**
   * Runs the page, then the count when asked (on the query pool: store/query.pool.ts). The schema
   * version is the one the page statement saw, or read on its own when the page is empty.
   */
  async query(pool: QueryPool, plan: QueryPlan): Promise<{ rows: QueryRow[]; schemaVersion: number; total?: number }> {
    const { page, count } = queryStatements(plan);
    const res = await pool.query<PageRow>(page.text, page.values);
    const arity = plan.keys.length;
    const rows = res.rows.map((r) => {
      const keys: (string | null)[] = [];
      for (let i = 0; i < arity; i++) keys.push(r[`k${i}`] ?? null);
      return { json: r.j, keys };
    });
    const schemaVersion =
      res.rows.length > 0 ? Number(res.rows[0]!.v) : Number((await pool.query<{ v: string }>(`select ${SCHEMA_VERSION_SQL} as v`)).rows[0]!.v);
    if (!count) return { rows, schemaVersion };
    const c = await pool.query<{ n: string }>(count.text, count.values);
    return { rows, schemaVersion, total: Number(c.rows[0]!.n) };
  }
}
