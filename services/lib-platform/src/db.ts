/**
 * PostgreSQL through MikroORM: one schema (namespace) per service, migrations applied at
 * start-up under an advisory lock so replicas starting together never race, and short
 * connection timeouts so a database that is down surfaces as `unavailable` quickly.
 */
import { createHash } from 'node:crypto';
import { MikroORM, type EntitySchema, type Knex, type MigrationObject } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { AppError } from './errors.js';
import type { Logger } from './logger.js';

export interface OrmOptions {
  clientUrl: string;
  /** The service's own PostgreSQL schema, e.g. `records`. */
  schema: string;
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  logger: Logger;
  poolMax?: number;
}

/** Opens the pool, creates the schema if needed and applies pending migrations. */
export async function openOrm(opts: OrmOptions): Promise<MikroORM> {
  const orm = await MikroORM.init({
    clientUrl: opts.clientUrl,
    schema: opts.schema,
    entities: opts.entities,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    debug: false,
    // At least 2: the migration lock holds one connection while the migrator uses another.
    pool: { min: 0, max: Math.max(2, opts.poolMax ?? 10), acquireTimeoutMillis: 3000 },
    driverOptions: {
      connection: {
        connectionTimeoutMillis: 2000,
        // A statement that runs away is cut off instead of holding a connection forever.
        statement_timeout: 30_000,
        application_name: opts.schema,
      },
    },
    migrations: {
      tableName: `${opts.schema}.mikro_orm_migrations`,
      migrationsList: opts.migrations,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    logger: (msg) => opts.logger.debug({ orm: msg }),
  });
  try {
    await migrate(orm, opts);
  } catch (err) {
    // Do not leave a pool open behind a failed start.
    await orm.close(true).catch(() => {});
    throw err;
  }
  return orm;
}

/** Creates the schema and applies pending migrations under a session advisory lock. */
async function migrate(orm: MikroORM, opts: OrmOptions): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  await knex.raw(`create schema if not exists "${opts.schema}"`).catch((err: { code?: string }) => {
    // Replicas starting together can both pass "if not exists" and then race on the catalog.
    if (err?.code !== '23505' && err?.code !== '42P06') throw err;
  });
  // Held on one pooled connection while the migrator runs on another.
  const lock = await LockedConnection.acquire(knex, `migrate:${opts.schema}`);
  try {
    const applied = await orm.getMigrator().up();
    if (applied.length) opts.logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  } finally {
    await lock.release();
  }
}

/** The part of a `pg` client a {@link LockedConnection} uses. */
interface PgConnection {
  query<R>(sql: string | { name: string; text: string; values: unknown[] }, params?: unknown[]): Promise<{ rows: R[] }>;
  on(event: 'error' | 'end', fn: (err?: Error) => void): unknown;
  removeListener(event: 'error' | 'end', fn: (err?: Error) => void): unknown;
}

/** The knex client internals that lend a pooled connection out for as long as it is needed. */
interface PoolClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): Promise<unknown>;
}

/** Names of prepared statements by their text (a hash of it, so two texts never share a name). */
const statementNames = new Map<string, string>();

/**
 * The name a statement is prepared under on every connection: `s_` and a hash of its text. A
 * connection parses and plans a named statement once and then only binds and executes it, which
 * for a create's insert is most of PostgreSQL's work per call (docs/architecture.md, "The write
 * path and its events").
 * Only for texts from a small fixed set (each name stays prepared on its connection for good), and
 * only for statements whose generic plan is as good as one made for the values (equality on a
 * primary key): after five runs PostgreSQL may keep a plan made without them, and with the
 * statistics of that moment. Neither the relay's step (`seq = any(…)` on an outbox of deleted
 * rows) nor the log's append (`event_id = any(…)` on a log that was small when first planned)
 * is one: their generic plans scan the whole table.
 */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/** `sql` with Knex's `?` bindings numbered `$1..$n`, as `pg` takes them (for texts without `??` or a literal `?`). */
export function pgPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * The rows of one hand-written statement on `db` (the service's Knex, or a transaction of it):
 * `db.raw(sql, bindings)` with Knex's `?` placeholders, answering `pg`'s rows. The one way a store
 * runs SQL of its own besides {@link queryPrepared} and {@link LockedConnection}
 * (docs/architecture.md, "Storage: MikroORM and Knex"). Errors are `pg`'s, for `guarded`.
 */
export async function sqlRows<R = Record<string, unknown>>(db: Knex, sql: string, bindings: readonly unknown[] = []): Promise<R[]> {
  const res = await db.raw<{ rows: R[] }>(sql, bindings as Knex.RawBinding[]);
  return res.rows;
}

/** What runs `$n` SQL text: {@link textQueries} over a Knex pool, or a `pg` pool or client. */
export interface TextQueries {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * Runs `text` (`$n` placeholders, any text: nothing is prepared) on a connection of `db`: a pooled
 * one, or the transaction's when `db` is a transaction. For SQL built with numbered parameters
 * (a query plan, the farm's statements) without Knex's per-statement work. Errors are `pg`'s.
 */
export async function queryText<R>(db: Knex, text: string, values: readonly unknown[] = []): Promise<R[]> {
  const client = db.client as PoolClient;
  const conn = (await client.acquireConnection()) as PgConnection;
  try {
    return (await conn.query<R>(text, values as unknown[])).rows;
  } finally {
    await client.releaseConnection(conn);
  }
}

/** `db` as {@link TextQueries}: each call one {@link queryText}. */
export function textQueries(db: Knex): TextQueries {
  return { query: async <R>(text: string, values?: unknown[]) => ({ rows: await queryText<R>(db, text, values) }) };
}

/**
 * Runs `text` (`$n` placeholders; a text from a small fixed set, see {@link statementName}) as a
 * named prepared statement on a connection of `db`: a pooled one, or the transaction's when `db`
 * is a transaction. Errors are `pg`'s, as through `db.raw`.
 */
export async function queryPrepared<R>(db: Knex, text: string, values: unknown[]): Promise<R[]> {
  const client = db.client as PoolClient;
  const conn = (await client.acquireConnection()) as PgConnection;
  try {
    return (await conn.query<R>({ name: statementName(text), text, values })).rows;
  } finally {
    await client.releaseConnection(conn);
  }
}

/**
 * One pooled connection kept out of the pool for as long as it holds a session-level
 * advisory lock on `key` (`pg_advisory_lock(hashtext(key))`). Whatever must happen only
 * while the lock is held runs on this connection ({@link query}): if the connection dies, the
 * lock goes with it ({@link lost}), so work done after losing it cannot commit. Advisory locks
 * are per database, so one key means one holder across every replica.
 */
export class LockedConnection {
  private lostError: Error | null = null;
  private released = false;
  private readonly lostWaiters: ((err: Error) => void)[] = [];
  private readonly onLost = (err?: Error) => {
    if (this.lostError) return;
    this.lostError = err ?? new Error(`connection holding ${this.key} ended`);
    for (const w of this.lostWaiters.splice(0)) w(this.lostError);
  };

  private constructor(
    private readonly pool: PoolClient,
    private readonly conn: PgConnection,
    /** The lock's name. */
    readonly key: string,
  ) {
    conn.on('error', this.onLost);
    conn.on('end', this.onLost);
  }

  /** Waits until the lock on `key` is free, then holds it. */
  static async acquire(knex: Knex, key: string): Promise<LockedConnection> {
    const locked = await LockedConnection.lock(knex, key, 'select pg_advisory_lock(hashtext($1)) as locked');
    if (!locked) throw new Error(`advisory lock ${key} was not granted`);
    return locked;
  }

  /** Holds the lock on `key` when it is free; null at once when another session holds it. */
  static tryAcquire(knex: Knex, key: string): Promise<LockedConnection | null> {
    return LockedConnection.lock(knex, key, 'select pg_try_advisory_lock(hashtext($1)) as locked');
  }

  private static async lock(knex: Knex, key: string, sql: string): Promise<LockedConnection | null> {
    const pool = knex.client as PoolClient;
    const conn = (await pool.acquireConnection()) as PgConnection;
    let rows: { locked: boolean | string }[];
    try {
      ({ rows } = await conn.query<{ locked: boolean | string }>(sql, [key]));
    } catch (err) {
      await pool.releaseConnection(conn).catch(() => {});
      throw err;
    }
    // pg_advisory_lock returns void: its row means granted.
    if (rows[0]?.locked !== false) return new LockedConnection(pool, conn, key);
    await pool.releaseConnection(conn).catch(() => {});
    return null;
  }

  /** The error that ended the connection (and so the lock), or null while it is held. */
  get lost(): Error | null {
    return this.lostError;
  }

  /** Resolves with that error once the connection is gone or released. */
  whenLost(): Promise<Error> {
    if (this.lostError) return Promise.resolve(this.lostError);
    return new Promise((resolve) => this.lostWaiters.push(resolve));
  }

  /** Runs one statement on the locked connection; resolves with its rows. */
  async query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]> {
    if (this.released) throw new Error(`advisory lock ${this.key} was released`);
    return (await this.conn.query<R>(sql, params)).rows;
  }

  /** Unlocks (unless the connection is gone) and returns the connection to the pool; idempotent. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.conn.removeListener('error', this.onLost);
    this.conn.removeListener('end', this.onLost);
    if (!this.lostError) await this.conn.query('select pg_advisory_unlock(hashtext($1))', [this.key]).catch(() => {});
    this.onLost(new Error(`advisory lock ${this.key} released`));
    await this.pool.releaseConnection(this.conn).catch(() => {});
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P03', '08000', '08003', '08006']);

/**
 * Maps a database failure to an {@link AppError}: lost connections and pool timeouts become
 * `unavailable`, values PostgreSQL refuses to store become `invalid`; anything else is
 * rethrown unchanged.
 */
export function dbError(err: unknown): never {
  if (err instanceof AppError) throw err;
  const e = err as { code?: string; message?: string; name?: string };
  // SQLSTATE class 22 (data exception) and check violations: a value PostgreSQL refuses to
  // store, such as a NUL character or a lone surrogate in jsonb. The client sent it: 422.
  if (typeof e?.code === 'string' && (e.code.startsWith('22') || e.code === '23514')) {
    throw AppError.invalid([{ loc: ['body'], msg: `a value cannot be stored: ${e.message ?? e.code}`, type: 'value_error' }], 'a value cannot be stored');
  }
  const msg = String(e?.message ?? '');
  if (
    (e?.code && CONNECTION_CODES.has(e.code)) ||
    /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|is not queryable/i.test(msg) ||
    e?.name === 'ConnectionException'
  ) {
    throw AppError.unavailable('database is unavailable', err);
  }
  throw err;
}

/** SQLSTATE → the error a store means by it (e.g. `23505` → a conflict with its own code). */
export type SqlStateErrors = Readonly<Record<string, (err: unknown) => AppError>>;

/**
 * Runs one store operation and maps its failure once: a SQLSTATE listed in `codes` becomes
 * that error, everything else goes through {@link dbError} (lost connection → `unavailable`,
 * a value PostgreSQL cannot store → `invalid`, anything else unchanged). Stores wrap each
 * public method in it instead of a try/catch of their own.
 */
export async function guarded<T>(query: () => Promise<T>, codes: SqlStateErrors = {}): Promise<T> {
  try {
    return await query();
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: unknown })?.code;
    const mapped = typeof code === 'string' && Object.hasOwn(codes, code) ? codes[code] : undefined;
    if (mapped) throw mapped(err);
    return dbError(err);
  }
}

/** `select 1` for readiness checks. */
export async function pingDb(orm: MikroORM): Promise<void> {
  await orm.em.getConnection().getKnex().raw('select 1');
}
