/**
 * Who a scheduled run acts as, and the scheduler's bounds, against the real PostgreSQL
 * (migrations schema-0004-scheduler and schema-0005-schedule-principal): a run acts as the last
 * editor, and one whose editor is demoted, retired or shut out fails and pauses the schedule once
 * (by the clock or by run now); the cap on schedules holds under concurrent creates; old runs are
 * pruned; migration 5 on a database holding schedules.
 */
import { createLogger, natsNames, newId, openOrm, SecretCipher } from '@reelbase/lib-platform';
import { createTestDatabase, TEST_SECRETS_KEY } from '@reelbase/lib-testkit';
import { describe, expect, it } from 'vitest';
import { configDigest } from '../src/kernel/domain/config.events.js';
import type { ScheduleRun } from '../src/scheduler/domain/scheduler.ports.js';
import { SchedulerService } from '../src/scheduler/domain/scheduler.service.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from '../src/migrations.js';
import { SchedulerRepository } from '../src/scheduler/store/scheduler.repository.js';
import { ADMIN, ADMIN2, admin, admin2, farmTarget, schedulerWorld } from './scheduler.world.js';

const world = schedulerWorld();
const { orms, replicas, jobs, users, sql, replica, setClock, tickAll, create, runsOf, outboxEvents } = world;

describe('the scheduler on PostgreSQL', () => {
  it('a run acts as the last editor: another Admin’s change makes them updated_by, and the next run theirs', async () => {
    const s = await create({ name: 'handover', cron: '0 * * * *', target: farmTarget });
    const changed = await replicas[1]!.update(s.id, JSON.stringify({ name: 'handed over' }), admin2);
    expect(changed).toMatchObject({ created_by: ADMIN, updated_by: ADMIN2 });
    const update = (await outboxEvents('Schedule')).find((e) => e.entity_id === s.id && e.action === 'update')!;
    expect(update).toMatchObject({ actor: ADMIN2, changes: { name: 'handed over', updated_by: ADMIN2 } });
    // The same Admin again: updated_by is not a change.
    await replicas[1]!.update(s.id, JSON.stringify({ name: 'handed over again' }), admin2);
    expect((await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id).at(-1)!.changes).toEqual({ name: 'handed over again' });
    setClock('2026-06-01T13:00:00.500Z');
    await tickAll();
    expect(jobs.map((j) => j.ctx.principal)).toEqual([expect.objectContaining({ userId: ADMIN2, authKind: 'service', via: 'schema' })]);
    const [run] = await runsOf(s.id);
    expect(run).toMatchObject({ status: 'ok', requested_by: null });
    expect((await outboxEvents('ScheduleRun')).find((e) => e.entity_id === run!.id)).toMatchObject({ actor: ADMIN2, changes: { requested_by: null } });
    // Run now by the creator: still as the last editor, asked for by the creator.
    const now2 = await replicas[0]!.runNow(s.id, admin);
    expect(now2).toMatchObject({ status: 'ok', requested_by: ADMIN });
    expect(jobs[1]!.ctx.principal).toMatchObject({ userId: ADMIN2 });
    expect((await outboxEvents('ScheduleRun')).find((e) => e.entity_id === now2.id)).toMatchObject({ actor: ADMIN2, changes: { requested_by: ADMIN } });
  });

  it('a demoted, retired or shut-out editor fails the clock’s run and pauses the schedule, once between two replicas', async () => {
    const cases: [string, (id: string) => void, RegExp][] = [
      ['demoted', (id) => users.set(id, { role: 'Artist', canSignIn: true }), /no longer an Admin \(now Artist\)/],
      ['retired', (id) => users.delete(id), /no longer exists or is retired/],
      ['shut out', (id) => users.set(id, { role: 'Admin', canSignIn: false }), /may no longer sign in/],
    ];
    const made: Record<string, any> = {};
    for (const [name] of cases) {
      const author = newId();
      users.set(author, { role: 'Admin', canSignIn: true });
      made[name] = await replicas[0]!.create(JSON.stringify({ name, cron: '0 * * * *', target: farmTarget }), {
        requestId: 'int',
        principal: { userId: author, role: 'Admin', authKind: 'token' },
      });
    }
    for (const [name, change] of cases) change(made[name].updated_by);
    setClock('2026-06-01T13:00:00.500Z');
    await tickAll();
    expect(jobs).toHaveLength(0);
    for (const [name, , why] of cases) {
      const s = made[name];
      const runs = await runsOf(s.id);
      expect(runs, name).toHaveLength(1);
      expect(runs[0]!.status, name).toBe('failed');
      expect(runs[0]!.result, name).toBeNull();
      expect(runs[0]!.error, name).toMatch(/^principal_refused: /);
      expect(runs[0]!.error, name).toMatch(why);
      expect(await replicas[1]!.get(s.id, admin), name).toMatchObject({ active: false, next_run_at: null });
      const pauses = (await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id && e.action === 'update');
      expect(pauses, name).toHaveLength(1);
      expect(pauses[0], name).toMatchObject({ actor: null, changes: { active: false, next_run_at: null, reason: expect.stringMatching(why) } });
      const runEvent = (await outboxEvents('ScheduleRun')).find((e) => e.entity_id === runs[0]!.id)!;
      expect(runEvent, name).toMatchObject({ actor: s.updated_by, changes: { status: 'failed', error: runs[0]!.error } });
    }
    // Paused: later occurrences do not run.
    setClock('2026-06-01T14:00:00.500Z');
    await tickAll();
    for (const [name] of cases) expect(await runsOf(made[name].id), name).toHaveLength(1);
    // Another Admin re-activates one: it runs as them from then on.
    await replicas[0]!.update(made.demoted.id, JSON.stringify({ active: true }), admin2);
    setClock('2026-06-01T15:00:00.500Z');
    await tickAll();
    expect((await runsOf(made.demoted.id))[0]).toMatchObject({ status: 'ok' });
    expect(jobs.map((j) => j.ctx.principal?.userId)).toEqual([ADMIN2]);
  });

  it('run now checks the editor too: two refused runs at once are two failed runs and one pause', async () => {
    const s = await create({ name: 'manual', cron: '0 * * * *', target: { kind: 'event', name: 'x', payload: { a: 1 } } });
    users.set(ADMIN, { role: 'Supervisor', canSignIn: true });
    const runs = await Promise.all([replicas[0]!.runNow(s.id, admin2), replicas[1]!.runNow(s.id, admin2)]);
    for (const r of runs) expect(r).toMatchObject({ status: 'failed', result: null, requested_by: ADMIN2, error: expect.stringMatching(/now Supervisor/) });
    expect(await replicas[0]!.get(s.id, admin)).toMatchObject({ active: false, next_run_at: null, updated_by: ADMIN });
    expect((await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id && e.action === 'update')).toHaveLength(1);
    // A refused event target writes neither its name nor its payload.
    for (const r of runs) expect((await outboxEvents('ScheduleRun')).find((e) => e.entity_id === r.id)!.changes).not.toHaveProperty('payload');
    // A directory that cannot be asked fails the run without pausing the schedule.
    const other = await create({ name: 'other', cron: '0 * * * *', target: { kind: 'event', name: 'y' } });
    world.directoryDown = true;
    const down = await replicas[0]!.runNow(other.id, admin2);
    expect(down).toMatchObject({ status: 'failed', error: expect.stringMatching(/^could not check whether user .* records is unavailable$/) });
    expect(await replicas[0]!.get(other.id, admin)).toMatchObject({ active: true });
  });

  it('caps the schedules: one more is 409 limit_reached, concurrent creates never pass the cap', async () => {
    const capped = await replica({ maxSchedules: 5 });
    const body = (i: number) => JSON.stringify({ name: `c${i}`, cron: '@daily', target: { kind: 'event', name: 'x' } });
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => capped.create(body(i), admin)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    for (const o of outcomes.filter((x) => x.status === 'rejected')) {
      expect((o as PromiseRejectedResult).reason).toMatchObject({ kind: 'conflict', code: 'limit_reached', extra: { limit: 5 } });
    }
    const kept = await sql<{ id: string }>('select id from schema.schedule');
    expect(kept).toHaveLength(5);
    // No event of a refused create.
    const names = new Set((await outboxEvents('Schedule')).filter((e) => e.action === 'create').map((e) => e.changes.name));
    expect(Array.from({ length: 12 }, (_, i) => `c${i}`).filter((n) => names.has(n))).toHaveLength(5);
    const first = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<any>).value;
    await capped.delete(first.id, admin);
    await expect(capped.create(body(99), admin)).resolves.toMatchObject({ name: 'c99' });
  });

  it('prunes runs past the newest kept per schedule and those past the retention, in batches, one replica at a time', async () => {
    const a = await create({ name: 'a', cron: '@daily', target: { kind: 'event', name: 'a' } });
    const b = await create({ name: 'b', cron: '@daily', target: { kind: 'event', name: 'b' } });
    // a: 12 runs a minute apart ending now; b: 3 recent runs and 2 from 100 days ago.
    const insert = async (scheduleId: string, at: Date) =>
      sql(`insert into schema.schedule_run (id, schedule_id, scheduled_for, started_at, status) values (?, ?, ?, ?, 'ok')`, [
        newId(),
        scheduleId,
        at.toISOString(),
        at.toISOString(),
      ]);
    for (let i = 0; i < 12; i += 1) await insert(a.id, new Date(world.now.getTime() - i * 60_000));
    for (let i = 0; i < 3; i += 1) await insert(b.id, new Date(world.now.getTime() - i * 60_000));
    for (let i = 0; i < 2; i += 1) await insert(b.id, new Date(world.now.getTime() - (100 + i) * 86_400_000));
    const pruner = await replica({ runsKept: 5, runRetentionDays: 90 });
    const repo = new SchedulerRepository(orms.at(-1)!.em.getConnection().getKnex(), natsNames(''), new SecretCipher(TEST_SECRETS_KEY));
    // A batch of 3 deletes 3; the service goes on until none is left.
    const before = new Date(world.now.getTime() - 90 * 86_400_000).toISOString();
    expect(await repo.pruneRuns(5, before, 3)).toBe(3);
    expect(await pruner.prune()).toBe(6);
    expect((await runsOf(a.id)).map((r) => r.started_at)).toEqual(
      Array.from({ length: 5 }, (_, i) => new Date(world.now.getTime() - i * 60_000).toISOString()),
    );
    expect(await runsOf(b.id)).toHaveLength(3);
    expect(await pruner.prune()).toBe(0);
    // While one replica prunes, another one's call deletes nothing.
    for (let i = 12; i < 15; i += 1) await insert(a.id, new Date(world.now.getTime() - i * 60_000));
    const knex = orms[0]!.em.getConnection().getKnex();
    await knex.transaction(async (trx) => {
      await trx.raw("select pg_advisory_xact_lock(hashtext('schema:schedule-run-prune'))");
      expect(await pruner.prune()).toBe(0);
    });
    expect(await pruner.prune()).toBe(3);
  });
});

describe('migration schema-0005-schedule-principal', () => {
  it('makes the creator of a schedule written before it the one it runs as; runs get no requester', async () => {
    const old = await createTestDatabase();
    const open = (migrations: typeof SCHEMA_MIGRATIONS) =>
      openOrm({ clientUrl: old.url, schema: SCHEMA_SCHEMA, entities: [], migrations, logger: createLogger('schema', 'silent') });
    try {
      const upTo4 = SCHEMA_MIGRATIONS.slice(0, SCHEMA_MIGRATIONS.findIndex((m) => m.name === 'schema-0004-scheduler') + 1);
      const first = await open(upTo4);
      const id = newId();
      const knex1 = first.em.getConnection().getKnex();
      await knex1.raw(
        `insert into schema.schedule (id, name, cron, timezone, target, active, catch_up, next_run_at, created_by)
         values (?, 'old', '@daily', 'UTC', '{"kind":"event","name":"x","payload":null}', true, 'skip', now(), ?)`,
        [id, ADMIN],
      );
      await knex1.raw(`insert into schema.schedule_run (id, schedule_id, scheduled_for, started_at, status) values (?, ?, now(), now(), 'ok')`, [newId(), id]);
      await first.close(true);
      const second = await open(SCHEMA_MIGRATIONS);
      try {
        const knex2 = second.em.getConnection().getKnex();
        expect((await knex2.raw<{ rows: unknown[] }>('select created_by, updated_by from schema.schedule')).rows).toEqual([
          { created_by: ADMIN, updated_by: ADMIN },
        ]);
        expect((await knex2.raw<{ rows: unknown[] }>('select requested_by from schema.schedule_run')).rows).toEqual([{ requested_by: null }]);
        const service = new SchedulerService({
          store: new SchedulerRepository(knex2, natsNames(''), new SecretCipher(TEST_SECRETS_KEY)),
          farm: { createJob: async () => newId() },
          deliveries: { enqueue: async (d) => d.deliveryId },
          authors: { find: async () => ({ role: 'Admin', canSignIn: true }) },
          digest: configDigest(Buffer.alloc(32, 9)),
        });
        expect(await service.get(id, admin)).toMatchObject({ created_by: ADMIN, updated_by: ADMIN });
        expect((await service.runs(id, {}, admin)).items).toEqual([expect.objectContaining({ status: 'ok', requested_by: null })]);
      } finally {
        await second.close(true);
      }
    } finally {
      await old.drop();
    }
  });
});
