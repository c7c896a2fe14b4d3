/**
 * openOrm against the real PostgreSQL: schema creation, migrations applied once under the
 * advisory lock when replicas start together, the migrations table inside the service's
 * schema, entities in that schema, and pingDb.
 */
import { Migration } from '@mikro-orm/migrations';
import { EntitySchema, type MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// lib-testkit depends on lib-platform, so lib-platform cannot depend on it back; its
// database helper only needs `pg`, which resolves from lib-testkit's own folder.
import { createTestDatabase, type TestDatabase } from '../../lib-testkit/src/database.js';
import { dbError, openOrm, pgPlaceholders, pingDb, queryPrepared, statementName } from '../src/db.js';
import { AppError } from '../src/errors.js';
import { createLogger } from '../src/logger.js';

const SCHEMA = 'platform_test';

interface Thing {
  id: string;
  name: string;
}

const ThingSchema = new EntitySchema<Thing>({
  name: 'Thing',
  tableName: 'thing',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
  },
});

class Migration20250101000001Things extends Migration {
  override async up(): Promise<void> {
    // Not idempotent on purpose: running it twice fails, and the insert would count twice.
    this.addSql(`create table ${SCHEMA}.thing (id text primary key, name text not null)`);
    this.addSql(`create table ${SCHEMA}.applied (n serial primary key)`);
    this.addSql(`insert into ${SCHEMA}.applied default values`);
    // Slow enough that a racing replica reaches the lock while this one holds it.
    this.addSql('select pg_sleep(0.3)');
  }
}

class Migration20250101000002More extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table ${SCHEMA}.thing add column note text null`);
    this.addSql(`insert into ${SCHEMA}.applied default values`);
  }
}

const FIRST = [{ name: 'Migration20250101000001Things', class: Migration20250101000001Things }];
const BOTH = [...FIRST, { name: 'Migration20250101000002More', class: Migration20250101000002More }];

describe('openOrm (PostgreSQL)', () => {
  const logger = createLogger('db-int', 'silent');
  let db: TestDatabase;
  const opened: MikroORM[] = [];

  const open = async (migrations = FIRST, poolMax?: number) => {
    const orm = await openOrm({ clientUrl: db.url, schema: SCHEMA, entities: [ThingSchema], migrations, logger, poolMax });
    opened.push(orm);
    return orm;
  };
  const rows = async (orm: MikroORM, sql: string, params: unknown[] = []) => orm.em.getConnection().execute<Record<string, unknown>[]>(sql, params);

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const orm of opened) await orm.close(true).catch(() => {});
    await db?.drop();
  });

  it('opens twice concurrently on a fresh database; migrations apply exactly once', async () => {
    const [a, b] = await Promise.all([open(), open()]);
    expect(await rows(a, `select count(*)::int as n from ${SCHEMA}.applied`)).toEqual([{ n: 1 }]);
    const migrations = await rows(b, `select name from ${SCHEMA}.mikro_orm_migrations order by id`);
    expect(migrations.map((m) => m.name)).toEqual(['Migration20250101000001Things']);
  });

  it('keeps the migrations table inside the service schema', async () => {
    const [orm] = opened;
    const tables = await rows(
      orm!,
      `select table_schema, table_name from information_schema.tables
        where table_name in ('mikro_orm_migrations', 'thing') order by table_schema, table_name`,
    );
    expect(tables).toEqual([
      { table_schema: SCHEMA, table_name: 'mikro_orm_migrations' },
      { table_schema: SCHEMA, table_name: 'thing' },
    ]);
  });

  it('maps entities to the service schema', async () => {
    const [orm] = opened;
    const em = orm!.em.fork();
    em.persist(em.create(ThingSchema, { id: 't1', name: 'Zoë' }));
    await em.flush();
    expect(await rows(orm!, `select id, name from ${SCHEMA}.thing`)).toEqual([{ id: 't1', name: 'Zoë' }]);
    const found = await orm!.em.fork().findOneOrFail(ThingSchema, { id: 't1' });
    expect(found.name).toBe('Zoë');
  });

  it('applies only the new migrations on a later start', async () => {
    const orm = await open(BOTH);
    expect(await rows(orm, `select count(*)::int as n from ${SCHEMA}.applied`)).toEqual([{ n: 2 }]);
    const migrations = await rows(orm, `select name from ${SCHEMA}.mikro_orm_migrations order by id`);
    expect(migrations.map((m) => m.name)).toEqual(['Migration20250101000001Things', 'Migration20250101000002More']);
    await open(BOTH);
    expect(await rows(orm, `select count(*)::int as n from ${SCHEMA}.applied`)).toEqual([{ n: 2 }]);
  });

  it('names its connections after the schema', async () => {
    const [orm] = opened;
    const names = await rows(orm!, 'select application_name from pg_stat_activity where pid = pg_backend_pid()');
    expect(names).toEqual([{ application_name: SCHEMA }]);
  });

  it('releases the migration lock once started', async () => {
    const [orm] = opened;
    // pg_locks spans the cluster; only this database's locks are ours.
    const locks = await rows(
      orm!,
      `select count(*)::int as n from pg_locks
        where locktype = 'advisory' and granted
          and database = (select oid from pg_database where datname = current_database())`,
    );
    expect(locks).toEqual([{ n: 0 }]);
  });

  it('queryPrepared prepares a statement once per connection, and runs on the transaction it is given', async () => {
    const orm = await open(FIRST, 1);
    const knex = orm.em.getConnection().getKnex();
    const text = `insert into ${SCHEMA}.thing (id, name) values ($1, $2) returning name`;
    expect(await queryPrepared(knex, text, ['p1', 'one'])).toEqual([{ name: 'one' }]);
    expect(await queryPrepared(knex, text, ['p2', 'two'])).toEqual([{ name: 'two' }]);
    // One connection in the pool: the statement is prepared on it under its name, once.
    const prepared = await knex.raw<{ rows: { name: string }[] }>('select name from pg_prepared_statements');
    expect(prepared.rows.map((r) => r.name)).toEqual([statementName(text)]);
    expect(statementName(text)).toMatch(/^s_[0-9a-f]{24}$/);
    expect(statementName(`${text} `)).not.toBe(statementName(text));
    await knex
      .transaction(async (trx) => {
        await queryPrepared(trx, text, ['p3', 'three']);
        // Seen inside the transaction, then rolled back with it.
        expect((await trx.raw<{ rows: unknown[] }>(`select 1 from ${SCHEMA}.thing where id = 'p3'`)).rows).toHaveLength(1);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await rows(orm, `select id from ${SCHEMA}.thing where id like 'p%' order by id`)).toEqual([{ id: 'p1' }, { id: 'p2' }]);
    expect(pgPlaceholders('select ?, ?::int where x = ?')).toBe('select $1, $2::int where x = $3');
  });

  it('pingDb answers while the pool is open, and fails once it is closed', async () => {
    const orm = await open();
    await expect(pingDb(orm)).resolves.toBeUndefined();
    await orm.close(true);
    await expect(pingDb(orm)).rejects.toThrow();
  });

  // Known defect: the advisory lock holds the pool's only connection while the migrator
  // waits for another one, so start-up fails after the 3 s acquire timeout. Turn this into
  // `it` once openOrm runs the migrations on the locked connection or sizes the pool >= 2.
  it('opens with a pool of a single connection', async () => {
    await open(FIRST, 1);
  });

  it('surfaces a database that is not there as unavailable quickly', async () => {
    const started = Date.now();
    let caught: unknown;
    try {
      const orm = await openOrm({
        clientUrl: 'postgres://postgres@127.0.0.1:1/none',
        schema: SCHEMA,
        entities: [ThingSchema],
        migrations: FIRST,
        logger,
      });
      opened.push(orm);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeDefined();
    let mapped: unknown;
    try {
      dbError(caught);
    } catch (err) {
      mapped = err;
    }
    expect(mapped).toBeInstanceOf(AppError);
    expect((mapped as AppError).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
