/**
 * openSqlPool against the real PostgreSQL: a statement past the pool's timeout is cancelled by
 * the server (57014) and its connection serves the next one, `max` bounds the connections the
 * pool opens, each named `<application>:<name>`, and a database that does not answer is
 * `unavailable` within the acquire timeout.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// lib-testkit depends on lib-platform, so lib-platform cannot depend on it back; its
// database helper only needs `pg`, which resolves from lib-testkit's own folder.
import { createTestDatabase, type TestDatabase } from '../../lib-testkit/src/database.js';
import { guarded, queryPrepared, queryText, sqlRows, textQueries } from '../src/db.js';
import { AppError } from '../src/errors.js';
import { knexPoolSample } from '../src/metrics.js';
import { openSqlPool, type SqlPoolOptions } from '../src/sql.pool.js';

describe('openSqlPool (PostgreSQL)', () => {
  let db: TestDatabase;
  const opened: Knex[] = [];

  const open = (o: Partial<SqlPoolOptions> = {}) => {
    const pool = openSqlPool({ name: 'reads', databaseUrl: db.url, max: 2, statementTimeoutMs: 5000, application: 'platform-test', ...o });
    opened.push(pool);
    return pool;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const pool of opened) await pool.destroy().catch(() => {});
    await db?.drop();
  });

  it('cancels a statement past its timeout (57014) and the connection serves the next one', async () => {
    const pool = open({ name: 'short', max: 1, statementTimeoutMs: 200 });
    const [before] = await sqlRows<{ pid: number }>(pool, 'select pg_backend_pid() as pid');
    const started = Date.now();
    const failure = await guarded(() => sqlRows(pool, 'select pg_sleep(2)')).catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(1500);
    // Not a lost connection: the server's own error, unchanged by `dbError`.
    expect(failure).not.toBeInstanceOf(AppError);
    expect((failure as { code?: string }).code).toBe('57014');
    const [after] = await sqlRows<{ pid: number; timeout: string }>(pool, `select pg_backend_pid() as pid, current_setting('statement_timeout') as timeout`);
    expect(after).toEqual({ pid: before!.pid, timeout: '200ms' });
  });

  it('opens at most `max` connections, named <application>:<name>, however many callers wait', async () => {
    const pool = open({ name: 'bounded', max: 2 });
    const watcher = open({ name: 'watcher', max: 1 });
    const sample = knexPoolSample(pool, 2);
    const peak = { used: 0, pending: 0 };
    const work = Array.from({ length: 6 }, () => sqlRows(pool, 'select pg_sleep(0.3)'));
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const s = sample();
      peak.used = Math.max(peak.used, s.used);
      peak.pending = Math.max(peak.pending, s.pending);
      const [row] = await sqlRows<{ n: number }>(
        watcher,
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'platform-test:bounded'`,
      );
      counts.push(row!.n);
      await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(work);
    expect(Math.max(...counts)).toBe(2);
    expect(peak.used).toBe(2);
    expect(peak.pending).toBeGreaterThan(0);
    expect(sample()).toEqual({ used: 0, free: 2, pending: 0, max: 2 });
  });

  it('is unavailable within about 3 s when the database does not answer', async () => {
    const pool = openSqlPool({
      name: 'nowhere',
      databaseUrl: 'postgres://postgres@127.0.0.1:1/none',
      max: 1,
      statementTimeoutMs: 1000,
      application: 'platform-test',
    });
    opened.push(pool);
    const started = Date.now();
    const failure = await guarded(() => sqlRows(pool, 'select 1')).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(3500);
  });

  it('refuses a pool without connections', () => {
    expect(() => openSqlPool({ name: 'none', databaseUrl: 'postgres://127.0.0.1/x', max: 0, statementTimeoutMs: 1000, application: 'platform-test' })).toThrow(
      RangeError,
    );
  });

  it('starts every connection with its settings, and refuses a setting that is not a plain name and value', async () => {
    const pool = open({ name: 'readonly', settings: { default_transaction_read_only: 'on', plan_cache_mode: 'force_generic_plan' } });
    const [s] = await sqlRows<{ ro: string; plan: string }>(
      pool,
      "select current_setting('default_transaction_read_only') as ro, current_setting('plan_cache_mode') as plan",
    );
    expect(s).toEqual({ ro: 'on', plan: 'force_generic_plan' });
    const write = await sqlRows(pool, 'create table nope (x int)').catch((err: { code?: string }) => err);
    expect((write as { code?: string }).code).toBe('25006'); // read_only_sql_transaction
    expect(() => open({ settings: { 'x; drop': 'on' } })).toThrow(RangeError);
    expect(() => open({ settings: { work_mem: '1MB -c x=y' } })).toThrow(RangeError);
  });

  it("reads dates, timestamps and intervals as text, as the ORM's connection does, and other types as pg parses them", async () => {
    const pool = open({ name: 'types' });
    const [row] = await queryText<Record<string, unknown>>(
      pool,
      "select '2026-11-28'::date as d, '2026-11-28 10:00:00.123456+00'::timestamptz as ts, '1 day'::interval as i, 5::int as n, true as b, $1::text as t",
      ['x'],
    );
    expect(row).toEqual({ d: '2026-11-28', ts: expect.stringMatching(/^2026-11-28 \d\d:00:00\.123456/), i: '1 day', n: 5, b: true, t: 'x' });
  });

  it('queryText runs numbered SQL on the pool or inside a transaction; textQueries answers as a pg pool does', async () => {
    const pool = open({ name: 'text' });
    await sqlRows(pool, 'create table if not exists texts (n int)');
    await pool
      .transaction(async (trx) => {
        await queryText(trx, 'insert into texts (n) values ($1), ($2)', [1, 2]);
        expect(await queryText<{ c: number }>(trx, 'select count(*)::int as c from texts')).toEqual([{ c: 2 }]);
        await trx.rollback();
      })
      .catch(() => {});
    expect(await queryText<{ c: number }>(pool, 'select count(*)::int as c from texts')).toEqual([{ c: 0 }]);
    expect(await textQueries(pool).query<{ v: number }>('select $1::int as v', [7])).toEqual({ rows: [{ v: 7 }] });
    expect(await queryPrepared<{ v: number }>(pool, 'select $1::int + 1 as v', [7])).toEqual([{ v: 8 }]);
  });
});
