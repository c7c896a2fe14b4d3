/**
 * The pool queries run on (docs/queries.md, "Statement timeout"): its own connections, so a
 * burst of slow queries never takes the connections writes need, each opened read-only and with
 * `statement_timeout` set, so PostgreSQL cancels a query statement that runs longer (SQLSTATE
 * 57014) without an extra round trip per query. A plain `pg` pool: a query is one statement
 * with bound parameters, so the query builder's per-statement work would be pure overhead on
 * the hot path (docs/queries.md, "The request path").
 */
import pg from 'pg';

export interface QueryPoolOptions {
  databaseUrl: string;
  /** statement_timeout of every connection, in ms. */
  timeoutMs: number;
  /** Most connections open at once. */
  max: number;
}

export type QueryPool = pg.Pool;

export function openQueryPool(o: QueryPoolOptions): QueryPool {
  const pool = new pg.Pool({
    connectionString: o.databaseUrl,
    connectionTimeoutMillis: 3000,
    statement_timeout: Math.max(1, Math.trunc(o.timeoutMs)),
    application_name: 'records-query',
    // A query never writes: this pool cannot, whatever SQL it is handed.
    options: '-c default_transaction_read_only=on',
    max: o.max,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection that fails (a server restart) is dropped by the pool; the next query opens another.
  pool.on('error', () => {});
  return pool;
}
