/**
 * The statement of a query (domain/record.query.ts): the plan's predicate, order and limit over
 * `records.record r`, and the count of every match when asked. The plan numbers its parameters
 * `$1..$n`; they are handed to the driver as bindings, never written into the SQL.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { QueryPlan, QueryRow } from '../domain/record.query.js';
import { COLUMNS, toStored, type Db, type Row } from './record.repository.js';

/** `sql` with `$n` placeholders as Knex `?` bindings, in the order they appear. */
export function toKnexBindings(sql: string, params: readonly unknown[]): { sql: string; bindings: unknown[] } {
  if (sql.includes('?')) throw new Error('a query plan must not contain ?');
  const bindings: unknown[] = [];
  const out = sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= params.length) throw new Error(`no parameter $${n}`);
    bindings.push(params[i]);
    return '?';
  });
  return { sql: out, bindings };
}

/** The statement of a page of `plan` (and of its count), as run by {@link QueryRepository}. */
export function queryStatements(plan: QueryPlan): { page: { sql: string; bindings: unknown[] }; count?: { sql: string; bindings: unknown[] } } {
  const keys = plan.keys.map((k, i) => `(${k})::text as k${i}`).join(', ');
  const page = toKnexBindings(
    `select ${COLUMNS}, ${keys}
       from records.record r
      where ${plan.where}
      order by ${plan.orderBy}
      limit ${Number(plan.limit)}`,
    plan.params,
  );
  if (!plan.includeTotal) return { page };
  return { page, count: toKnexBindings(`select count(*)::bigint as n from records.record r where ${plan.where}`, plan.params) };
}

/** Statements of queries. */
export class QueryRepository {
  /** Runs the page, then the count when asked (on the query pool: store/query.pool.ts). */
  async query(db: Db, plan: QueryPlan): Promise<{ rows: QueryRow[]; total?: number }> {
    const { page, count } = queryStatements(plan);
    const res = await db.raw<{ rows: (Row & Record<string, string | null>)[] }>(page.sql, page.bindings as Knex.RawBinding[]);
    const rows = res.rows.map((r) => ({ record: toStored(r), keys: plan.keys.map((_k, i) => r[`k${i}`] ?? null) }));
    if (!count) return { rows };
    const c = await db.raw<{ rows: { n: string }[] }>(count.sql, count.bindings as Knex.RawBinding[]);
    return { rows, total: Number(c.rows[0]!.n) };
  }
}
