/**
 * Named pools: a Knex instance with a pool of its own beside the one MikroORM opens (`openOrm`),
 * for work that must not queue behind the service's other statements or must be cut off sooner
 * (docs/architecture.md, "Storage: MikroORM and Knex"). Each has the connect timeout of `openOrm`,
 * its own `statement_timeout`, `application_name` `<application>:<name>` (so `pg_stat_activity`
 * tells the pools apart) and a short acquire timeout, so an exhausted or unreachable database
 * surfaces as `unavailable` through `dbError` instead of a caller waiting for ever.
 *
 * The statements are hand-written SQL on the instance, as on the ORM's Knex: `db.raw`,
 * `db.transaction`, `sqlRows`, `queryPrepared`, `LockedConnection`. Values come back as `pg`
 * parses them (timestamps as `Date`, `bigint` as text), unlike the ORM's connection, which
 * leaves dates as text.
 */
import { knex, type Knex } from '@mikro-orm/postgresql';

export interface SqlPoolOptions {
  /** The pool's name (`writes`, `short-reads`, ...): in `application_name` and the pool metric. */
  name: string;
  databaseUrl: string;
  /** Most connections the pool opens. */
  max: number;
  /** PostgreSQL cancels a statement of this pool that runs longer (SQLSTATE 57014). */
  statementTimeoutMs: number;
  /** The service, e.g. `records`: `application_name` is `<application>:<name>`. */
  application: string;
  /** Longest wait for a connection (all in use, or none can be opened) before `unavailable`; default 3 s, as `openOrm`. */
  acquireTimeoutMs?: number;
}

/** A new connection that does not answer within this is a database that is down (as `openOrm`). */
const CONNECT_TIMEOUT_MS = 2000;
const ACQUIRE_TIMEOUT_MS = 3000;

/** Opens a named pool (connections are made on first use); close it with `destroy()`. */
export function openSqlPool(opts: SqlPoolOptions): Knex {
  if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError(`pool ${opts.name}: max must be a positive integer, not ${opts.max}`);
  return knex({
    client: 'pg',
    connection: {
      connectionString: opts.databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: opts.statementTimeoutMs,
      application_name: `${opts.application}:${opts.name}`,
    },
    pool: { min: 0, max: opts.max, acquireTimeoutMillis: opts.acquireTimeoutMs ?? ACQUIRE_TIMEOUT_MS },
  });
}
