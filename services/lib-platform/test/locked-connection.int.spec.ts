/**
 * LockedConnection against the real PostgreSQL: one holder per key across pools, the lock
 * handed on when released, and a connection that dies takes its lock with it and says so.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../lib-testkit/src/database.js';
import { LockedConnection, openOrm } from '../src/db.js';
import { createLogger } from '../src/logger.js';

describe('LockedConnection (PostgreSQL)', () => {
  const logger = createLogger('lock-int', 'silent');
  let db: TestDatabase;
  let a: MikroORM;
  let b: MikroORM;
  const knex = (orm: MikroORM) => orm.em.getConnection().getKnex();

  beforeAll(async () => {
    db = await createTestDatabase();
    // Two pools: two replicas of one service.
    a = await openOrm({ clientUrl: db.url, schema: 'lock_test', entities: [], migrations: [], logger });
    b = await openOrm({ clientUrl: db.url, schema: 'lock_test', entities: [], migrations: [], logger });
  });

  afterAll(async () => {
    await a?.close(true);
    await b?.close(true);
    await db?.drop();
  });

  it('lets one pool hold a key; the other gets null until it is released', async () => {
    const first = await LockedConnection.tryAcquire(knex(a), 'test:one-holder');
    expect(first).not.toBeNull();
    expect(await LockedConnection.tryAcquire(knex(b), 'test:one-holder')).toBeNull();
    // Another key is independent.
    const other = await LockedConnection.tryAcquire(knex(b), 'test:another');
    expect(other).not.toBeNull();
    await other!.release();

    const pid = (await first!.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
    expect(pid).toBeGreaterThan(0);
    await first!.release();
    await first!.release(); // idempotent
    await expect(first!.query('select 1')).rejects.toThrow(/released/);
    const second = await LockedConnection.tryAcquire(knex(b), 'test:one-holder');
    expect(second).not.toBeNull();
    await second!.release();
  });

  it('acquire waits for the holder to let go', async () => {
    const holder = (await LockedConnection.tryAcquire(knex(a), 'test:wait'))!;
    let got: LockedConnection | null = null;
    const waiting = LockedConnection.acquire(knex(b), 'test:wait').then((c) => (got = c));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toBeNull();
    await holder.release();
    await waiting;
    expect(got).not.toBeNull();
    await got!.release();
  });

  it('reports a connection that dies as lost, and its lock is free again', async () => {
    const held = (await LockedConnection.tryAcquire(knex(a), 'test:lost'))!;
    const pid = (await held.query<{ pid: number }>('select pg_backend_pid() as pid'))[0]!.pid;
    expect(held.lost).toBeNull();
    const lost = held.whenLost();
    await b.em.getConnection().execute('select pg_terminate_backend(?)', [pid]);
    await expect(lost).resolves.toBeInstanceOf(Error);
    expect(held.lost).not.toBeNull();
    await held.release();
    const next = await LockedConnection.tryAcquire(knex(b), 'test:lost');
    expect(next).not.toBeNull();
    await next!.release();
  });
});
