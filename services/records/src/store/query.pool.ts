/**
 * The pool queries run on (docs/queries.md, "Statement timeout"): its own connections, so a
 * burst of slow queries never takes the connections writes need, each opened read-only and with
 * `statement_timeout` set, so PostgreSQL cancels a query statement that runs longer (SQLSTATE
 * 57014) without an extra round trip per query.
 */
import { knex, type Knex } from '@mikro-orm/postgresql';

export interface QueryPoolOptions {
  databaseUrl: string;
  /** statement_timeout of every connection, in ms. */
  timeoutMs: number;
  /** Most connections open at once. */
  max: number;
}

export function openQueryPool(o: QueryPoolOptions): Knex {
  return knex({
    client: 'pg',
    connection: {
      connectionString: o.databaseUrl,
      connectionTimeoutMillis: 2000,
      statement_timeout: Math.max(1, Math.trunc(o.timeoutMs)),
      application_name: 'records-query',
      // A query never writes: this pool cannot, whatever SQL it is handed.
      options: '-c default_transaction_read_only=on',
    },
    pool: { min: 0, max: o.max, acquireTimeoutMillis: 3000 },
  });
}
