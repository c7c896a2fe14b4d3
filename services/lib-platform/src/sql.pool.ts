/**
 * Named pools: a Knex instance with a pool of its own beside the one MikroORM opens (`openOrm`),
 * for work that must not queue behind the service's other statements or must be cut off sooner
 * (docs/architecture.md, "Storage: MikroORM and Knex"). Each has the connect timeout of `openOrm`,
 * its own `statement_timeout`, `application_name` `<application>:<name>` (so `pg_stat_activity`
 * tells the pools apart) and a short acquire timeout, so an exhausted or unreachable database
 * surfaces as `unavailable` through `dbError` instead of a caller waiting for ever.
 *
 * The statements are hand-written SQL on the instance, as on the ORM's Knex: `db.raw`,
 * `db.transaction`, `sqlRows`, `queryPrepared`, `queryText`, `LockedConnection`. Values come back
 * as on the ORM's connection: dates, timestamps and intervals as the text PostgreSQL writes,
 * `bigint` as text, the rest as `pg` parses it.
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
  /**
   * Settings every connection of the pool starts with (`-c name=value`), e.g.
   * `default_transaction_read_only: 'on'` for a pool that must never write.
   */
  settings?: Readonly<Record<string, string>>;
}

/** The oids of date, timestamp, timestamptz and interval: kept as text, as MikroORM's connection keeps them. */
const AS_TEXT: ReadonlySet<number> = new Set([1082, 1114, 1184, 1186]);
const SETTING_NAME = /^[a-z_][a-z0-9_.]*$/;
const SETTING_VALUE = /^[A-Za-z0-9_.:-]+$/;

interface TypeParsers {
  getTypeParser(oid: number, format?: string): unknown;
}

/** A new connection that does not answer within this is a database that is down (as `openOrm`). */
const CONNECT_TIMEOUT_MS = 2000;
const ACQUIRE_TIMEOUT_MS = 3000;

/** Opens a named pool (connections are made on first use); close it with `destroy()`. */
export function openSqlPool(opts: SqlPoolOptions): Knex {
  if (!Number.isInteger(opts.max) || opts.max < 1) throw new RangeError(`pool ${opts.name}: max must be a positive integer, not ${opts.max}`);
  const settings = Object.entries(opts.settings ?? {}).map(([name, value]) => {
    if (!SETTING_NAME.test(name) || !SETTING_VALUE.test(value))
      throw new RangeError(`pool ${opts.name}: setting ${name}=${value} is not a plain name and value`);
    return `-c ${name}=${value}`;
  });
  // The driver's own parsers, for every type but the dates (read when the first row arrives).
  const driverTypes = (): TypeParsers => (db.client as { driver: { types: TypeParsers } }).driver.types;
  const types: TypeParsers = { getTypeParser: (oid, format) => (AS_TEXT.has(oid) ? (text: string) => text : driverTypes().getTypeParser(oid, format)) };
  const db = knex({
    client: 'pg',
    connection: {
      connectionString: opts.databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: opts.statementTimeoutMs,
      application_name: `${opts.application}:${opts.name}`,
      types,
      ...(settings.length ? { options: settings.join(' ') } : {}),
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: opts.max, acquireTimeoutMillis: opts.acquireTimeoutMs ?? ACQUIRE_TIMEOUT_MS },
  });
  return db;
}
