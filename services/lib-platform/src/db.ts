/**
 * PostgreSQL through MikroORM: one schema (namespace) per service, migrations applied at
 * start-up under an advisory lock so replicas starting together never race, and short
 * connection timeouts so a database that is down surfaces as `unavailable` quickly.
 */
import { MikroORM, type EntitySchema, type MigrationObject } from '@mikro-orm/postgresql';
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
  // Session-level lock on one pooled connection, held while migrations run.
  const conn = await knex.client.acquireConnection();
  try {
    await conn.query('select pg_advisory_lock(hashtext($1))', [`migrate:${opts.schema}`]);
    const applied = await orm.getMigrator().up();
    if (applied.length) opts.logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  } finally {
    await conn.query('select pg_advisory_unlock(hashtext($1))', [`migrate:${opts.schema}`]).catch(() => {});
    await knex.client.releaseConnection(conn);
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
    /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect/i.test(msg) ||
    e?.name === 'ConnectionException'
  ) {
    throw AppError.unavailable('database is unavailable', err);
  }
  throw err;
}

/** `select 1` for readiness checks. */
export async function pingDb(orm: MikroORM): Promise<void> {
  await orm.em.getConnection().execute('select 1');
}
