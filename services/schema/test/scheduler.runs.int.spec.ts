/**
 * The scheduler's schedules and runs against the real PostgreSQL (migration
 * schema-0004-scheduler), driven through its use cases and its tick loop with a clock the test
 * moves: an every-minute schedule runs once per minute; two replicas (two pools, two loops, one
 * database) make each occurrence once between them; `catch_up` skip and once after downtime;
 * `active: false` stops a schedule; run now; runs newest first with paging; each target kind; a
 * failing target is a failed run; every change and run writes its event to the schema outbox in the
 * same transaction, and no event shows a target's URL, secret or payload.
 */
import { newId } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { SchedulerLoop } from '../src/scheduler/loop/scheduler.loop.js';
import type { ScheduleRun } from '../src/scheduler/domain/scheduler.ports.js';
import { ADMIN, admin, artist, farmTarget, P, schedulerWorld } from './scheduler.world.js';

const world = schedulerWorld();
const { replicas, jobs, deliveries, sql, setClock, tickAll, create, runsOf, outboxEvents } = world;

describe('the scheduler on PostgreSQL', () => {
  it('computes next_run_at in the schedule’s zone and writes a Schedule event', async () => {
    const s = await create({ name: 'Paris mornings', cron: '0 9 * * 1-5', timezone: 'Europe/Paris', target: farmTarget });
    // Monday 2026-06-01 is past 09:00 in Paris (14:30): Tuesday 09:00 CEST.
    expect(s).toMatchObject({
      active: true,
      catch_up: 'skip',
      timezone: 'Europe/Paris',
      next_run_at: '2026-06-02T07:00:00.000Z',
      created_by: ADMIN,
      updated_by: ADMIN,
    });
    const daily = await create({ name: 'Tokyo', cron: '@daily', timezone: 'Asia/Tokyo', target: { kind: 'event', name: 'midnight' } });
    expect(daily.next_run_at).toBe('2026-06-01T15:00:00.000Z');
    const e = (await outboxEvents('Schedule')).find((x) => x.entity_id === s.id)!;
    expect(e).toMatchObject({ action: 'create', actor: ADMIN, project_id: P.toLowerCase(), changes: { name: 'Paris mornings', cron: '0 9 * * 1-5' } });
    await expect(create({ name: 'x', cron: '0 25 * * *', timezone: 'Nowhere/City', target: farmTarget })).rejects.toMatchObject({
      kind: 'invalid',
      problems: [
        { loc: ['body', 'cron'], msg: expect.any(String), type: 'value_error' },
        { loc: ['body', 'timezone'], msg: expect.any(String), type: 'value_error' },
      ],
    });
    await expect(replicas[0]!.list(artist)).rejects.toMatchObject({ kind: 'forbidden' });
  });

  it('runs an every-minute schedule once per minute, each occurrence once between two replicas', async () => {
    const many: any[] = [];
    for (let i = 0; i < 10; i += 1) many.push(await create({ name: `m${i}`, cron: '* * * * *', target: farmTarget }));
    expect(many[0].next_run_at).toBe('2026-06-01T12:01:00.000Z');
    await tickAll();
    expect(jobs).toHaveLength(0); // nothing due before 12:01
    setClock('2026-06-01T12:01:00.400Z');
    await tickAll();
    setClock('2026-06-01T12:01:30.000Z');
    await tickAll();
    expect(jobs).toHaveLength(10);
    setClock('2026-06-01T12:02:02.000Z');
    await tickAll();
    expect(jobs).toHaveLength(20);
    for (const s of many) {
      const runs = await runsOf(s.id);
      expect(runs.map((r) => r.scheduled_for)).toEqual(['2026-06-01T12:02:00.000Z', '2026-06-01T12:01:00.000Z']);
      expect(runs.every((r) => r.status === 'ok' && typeof (r.result as { job_id: string }).job_id === 'string')).toBe(true);
      expect((await replicas[1]!.get(s.id, admin)).next_run_at).toBe('2026-06-01T12:03:00.000Z');
    }
    // The job is the schedule's, submitted for its creator by the schema service.
    expect(jobs[0]!.job).toEqual(farmTarget.job);
    expect(jobs[0]!.ctx.principal).toMatchObject({ userId: ADMIN, authKind: 'service', via: 'schema' });
    // A replica that read the schedule before the run committed (next_run_at still 12:02) claims the
    // same occurrence: the unique run per (schedule, scheduled_for) refuses it; no job, no event.
    await sql(`update schema.schedule set next_run_at = '2026-06-01T12:02:00Z'`);
    await tickAll();
    expect(jobs).toHaveLength(20);
    const runEvents = await outboxEvents('ScheduleRun');
    expect(runEvents).toHaveLength(20);
    expect(new Set(runEvents.map((e) => `${e.changes.schedule_id} ${e.changes.scheduled_for}`)).size).toBe(20);
  });

  it('with two running loops on one database, every occurrence runs exactly once', async () => {
    const many: any[] = [];
    for (let i = 0; i < 8; i += 1) many.push(await create({ name: `l${i}`, cron: '* * * * *', target: { kind: 'event', name: `e${i}` } }));
    const loops = replicas.map(
      (r) =>
        new SchedulerLoop(
          20,
          () => r.runDue(),
          (err) => console.error(err),
        ),
    );
    for (const l of loops) l.start();
    try {
      for (const minute of ['12:01', '12:02', '12:03']) {
        setClock(`2026-06-01T${minute}:00.100Z`);
        const want = many.length * (['12:01', '12:02', '12:03'].indexOf(minute) + 1);
        for (let i = 0; i < 200 && (await sql('select 1 from schema.schedule_run')).length < want; i += 1) await new Promise((r) => setTimeout(r, 20));
        // Both loops keep ticking on the same minute: nothing more is made.
        await new Promise((r) => setTimeout(r, 200));
        expect((await sql('select 1 from schema.schedule_run')).length).toBe(want);
      }
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
    }
    for (const s of many) expect((await runsOf(s.id)).map((r) => r.scheduled_for.slice(11, 16))).toEqual(['12:03', '12:02', '12:01']);
  });

  it('after downtime, catch_up skip runs none of the missed occurrences and once runs one', async () => {
    const skip = await create({ name: 'skip', cron: '*/5 * * * *', target: farmTarget });
    const once = await create({ name: 'once', cron: '*/5 * * * *', target: farmTarget, catch_up: 'once' });
    // Nothing ran from 12:00:30 to 13:02:10: twelve occurrences were missed.
    setClock('2026-06-01T13:02:10.000Z');
    await tickAll();
    expect(await runsOf(skip.id)).toEqual([]);
    expect((await runsOf(once.id)).map((r) => r.scheduled_for)).toEqual(['2026-06-01T13:00:00.000Z']);
    for (const s of [skip, once]) expect((await replicas[0]!.get(s.id, admin)).next_run_at).toBe('2026-06-01T13:05:00.000Z');
    // Back to normal: the next occurrence runs for both.
    setClock('2026-06-01T13:05:01.000Z');
    await tickAll();
    expect((await runsOf(skip.id)).map((r) => r.scheduled_for)).toEqual(['2026-06-01T13:05:00.000Z']);
    expect((await runsOf(once.id)).map((r) => r.scheduled_for)).toEqual(['2026-06-01T13:05:00.000Z', '2026-06-01T13:00:00.000Z']);
  });

  it('active false stops a schedule; made active again it runs from the next occurrence on', async () => {
    const s = await create({ name: 'hourly', cron: '@hourly', target: farmTarget });
    const off = await replicas[0]!.update(s.id, JSON.stringify({ active: false }), admin);
    expect(off).toMatchObject({ active: false, next_run_at: null });
    setClock('2026-06-01T15:00:01.000Z');
    await tickAll();
    expect(await runsOf(s.id)).toEqual([]);
    const on = await replicas[1]!.update(s.id, JSON.stringify({ active: true }), admin);
    expect(on.next_run_at).toBe('2026-06-01T16:00:00.000Z');
    await tickAll();
    expect(await runsOf(s.id)).toEqual([]);
    const updates = (await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id && e.action === 'update');
    expect(updates.map((e) => e.changes)).toEqual([
      { active: false, next_run_at: null },
      { active: true, next_run_at: '2026-06-01T16:00:00.000Z' },
    ]);
    // A change that changes nothing writes nothing.
    await replicas[0]!.update(s.id, JSON.stringify({ active: true, name: 'hourly' }), admin);
    expect((await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id)).toHaveLength(3);
  });

  it('runs now, once, as the schedule’s editor for the caller (even inactive); runs are listed newest first with paging', async () => {
    const s = await create({ name: 'manual', cron: '0 0 1 1 *', target: { kind: 'event', name: 'report', payload: { week: 22 } }, active: false });
    const made: ScheduleRun[] = [];
    for (let i = 0; i < 5; i += 1) {
      setClock(`2026-06-01T12:0${i}:00.000Z`);
      made.push(await replicas[i % 2]!.runNow(s.id, admin));
    }
    expect(made[0]).toEqual({
      id: expect.any(String),
      scheduled_for: '2026-06-01T12:00:00.000Z',
      started_at: '2026-06-01T12:00:00.000Z',
      status: 'ok',
      result: { name: 'report' },
      error: null,
      requested_by: ADMIN,
    });
    const page1 = await replicas[0]!.runs(s.id, { limit: 2 }, admin);
    expect(page1.items.map((r) => r.id)).toEqual([made[4]!.id, made[3]!.id]);
    const page2 = await replicas[0]!.runs(s.id, { limit: 2, cursor: page1.next_cursor! }, admin);
    const page3 = await replicas[0]!.runs(s.id, { limit: 2, cursor: page2.next_cursor! }, admin);
    expect([...page2.items, ...page3.items].map((r) => r.id)).toEqual([made[2]!.id, made[1]!.id, made[0]!.id]);
    expect(page3.next_cursor).toBeNull();
    // The event target is nothing but the run's event, with the name and payload.
    const e = (await outboxEvents('ScheduleRun')).find((x) => x.entity_id === made[0]!.id)!;
    expect(e).toMatchObject({
      action: 'create',
      actor: ADMIN,
      changes: { schedule_id: s.id, kind: 'event', name: 'report', payload: { week: 22 }, status: 'ok', requested_by: ADMIN },
    });
    expect((await replicas[0]!.get(s.id, admin)).next_run_at).toBeNull();
    await expect(replicas[0]!.runNow(newId(), admin)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(replicas[0]!.runs(s.id, { cursor: 'nope' }, admin)).rejects.toMatchObject({ kind: 'invalid' });
  });

  it('a webhook target is queued once per run with its body and secret; a failing target is a failed run', async () => {
    const hook = await create({
      name: 'report',
      cron: '0 * * * *',
      target: { kind: 'webhook', url: 'https://hooks.example.com/report', secret: 'a-secret-of-sixteen+' },
    });
    expect(hook.target).toEqual({ kind: 'webhook', url: 'https://hooks.example.com/report', has_secret: true });
    setClock('2026-06-01T13:00:00.500Z');
    await tickAll();
    const [run] = await runsOf(hook.id);
    const d = deliveries.get(run!.id)!;
    expect(d).toEqual({
      deliveryId: run!.id,
      scheduleId: hook.id,
      url: 'https://hooks.example.com/report',
      secret: 'a-secret-of-sixteen+',
      body: JSON.stringify({ schedule_id: hook.id, run_id: run!.id, scheduled_for: '2026-06-01T13:00:00.000Z' }),
    });
    // The secret is sealed at rest; a PATCH without one keeps it.
    expect((await sql<{ secret: string }>('select secret from schema.schedule where id = ?', [hook.id]))[0]!.secret).not.toContain('sixteen');
    const moved = await replicas[0]!.update(hook.id, JSON.stringify({ target: { kind: 'webhook', url: 'https://hooks.example.com/v2' } }), admin);
    expect(moved.target).toEqual({ kind: 'webhook', url: 'https://hooks.example.com/v2', has_secret: true });

    const job = await create({ name: 'job', cron: '0 * * * *', target: farmTarget });
    world.failFarm = true;
    setClock('2026-06-01T14:00:00.500Z');
    await tickAll();
    const [failed] = await runsOf(job.id);
    expect(failed).toMatchObject({ scheduled_for: '2026-06-01T14:00:00.000Z', status: 'failed', result: null, error: 'records is unavailable' });
    // A failed run is not tried again.
    world.failFarm = false;
    setClock('2026-06-01T14:00:30.000Z');
    await tickAll();
    expect(await runsOf(job.id)).toHaveLength(1);
  });

  it('deletes a schedule with its runs (404 afterwards) and writes a delete event', async () => {
    const s = await create({ name: 'gone', cron: '* * * * *', target: { kind: 'event', name: 'x' } });
    await replicas[0]!.runNow(s.id, admin);
    expect(await replicas[1]!.delete(s.id, admin)).toEqual({ id: s.id, deleted: true });
    await expect(replicas[0]!.get(s.id, admin)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(replicas[0]!.runs(s.id, {}, admin)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(replicas[0]!.delete(s.id, admin)).rejects.toMatchObject({ kind: 'not_found' });
    expect(await sql('select 1 from schema.schedule_run where schedule_id = ?', [s.id])).toEqual([]);
    expect((await outboxEvents('Schedule')).filter((e) => e.entity_id === s.id).map((e) => e.action)).toEqual(['create', 'delete']);
  });

  it('no Schedule or ScheduleRun event shows a webhook URL, its secret or a farm job payload; the digest moves with the target', async () => {
    const url = 'https://hooks.chat.example/services/T0/B0/xoxb-int-recognisable';
    const secret = 'int-recognisable-signing-secret';
    const payloadSecret = 'int-payload-token-recognisable';
    const hook = await create({ name: 'chat', cron: '0 * * * *', target: { kind: 'webhook', url, secret } });
    expect(hook.target).toEqual({ kind: 'webhook', url, has_secret: true });
    const job = await create({ name: 'job', cron: '0 * * * *', target: { ...farmTarget, job: { ...farmTarget.job, payload: { token: payloadSecret } } } });
    await replicas[0]!.update(hook.id, JSON.stringify({ target: { kind: 'webhook', url: `${url}-2` } }), admin);
    await replicas[0]!.update(hook.id, JSON.stringify({ target: { kind: 'webhook', url: `${url}-2`, secret: `${secret}-2` } }), admin);
    await replicas[0]!.update(job.id, JSON.stringify({ name: 'job 2' }), admin);
    // A run whose target the notifier refuses, naming it: the run (Admins) says so, its event hides it.
    const refused = await create({ name: 'refused', cron: '0 * * * *', target: { kind: 'webhook', url: `${url}-refused`, secret } });
    const run = await replicas[0]!.runNow(refused.id, admin);
    expect(run).toMatchObject({ status: 'failed', error: `the notifier refused ${url}-refused` });
    await replicas[0]!.delete(hook.id, admin);
    const events = [...(await outboxEvents('Schedule')), ...(await outboxEvents('ScheduleRun'))];
    const text = JSON.stringify(events);
    for (const hidden of ['xoxb-int-recognisable', 'hooks.chat.example', secret, payloadSecret]) expect(text).not.toContain(hidden);
    const hookEvents = events.filter((e) => e.entity_id === hook.id);
    expect(hookEvents.map((e) => e.action)).toEqual(['create', 'update', 'update', 'delete']);
    const targets = hookEvents.slice(0, 3).map((e) => e.changes.target as Record<string, unknown>);
    for (const t of targets) expect(t).toEqual({ kind: 'webhook', has_url: true, has_secret: true, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(new Set(targets.map((t) => t.digest)).size).toBe(3);
    expect(events.find((e) => e.entity_id === job.id && e.action === 'create')!.changes.target).toEqual({
      kind: 'farm_job',
      has_payload: true,
      digest: expect.any(String),
    });
    expect(events.find((e) => e.entity_id === run.id)!.changes.error).toBe('the notifier refused [hidden]');
  });
});
