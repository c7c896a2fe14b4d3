/**
 * The scheduler against the real PostgreSQL (migrations schema-0004-scheduler and
 * schema-0005-schedule-principal), driven through its use cases and its tick loop with a clock the
 * test moves, records' farm, the users directory and the notifier stood in (they record what they
 * were asked): an every-minute schedule runs once per minute; two replicas (two pools, two loops,
 * one database) make each occurrence once between them; `catch_up` skip and once after downtime;
 * `active: false` stops a schedule; run now; runs newest first with paging; each target kind; a
 * failing target is a failed run; every change and run writes its event to the schema outbox in the
 * same transaction, and no event shows a target's URL, secret or payload; a run acts as the last
 * editor, and one whose editor is demoted, retired or shut out fails and pauses the schedule once;
 * the cap on schedules holds under concurrent creates; old runs are pruned; migration 5 on a
 * database holding schedules.
 */
import { createLogger, natsNames, newId, openOrm, SecretCipher, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configDigest } from '../src/kernel/domain/config.events.js';
import { SchedulerLoop } from '../src/scheduler/loop/scheduler.loop.js';
import type { ScheduleAuthor, ScheduleDelivery, ScheduleRun } from '../src/scheduler/domain/scheduler.ports.js';
import type { SchedulerLimits } from '../src/scheduler/domain/scheduler.rules.js';
import { SchedulerService } from '../src/scheduler/domain/scheduler.service.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from '../src/migrations.js';
import { SchedulerRepository } from '../src/scheduler/store/scheduler.repository.js';

const ADMIN = newId();
const ADMIN2 = newId();
const P = newId();
const admin: CallContext = { requestId: 'int', principal: { userId: ADMIN, role: 'Admin', authKind: 'token' } };
const admin2: CallContext = { requestId: 'int', principal: { userId: ADMIN2, role: 'Admin', authKind: 'token' } };
const artist: CallContext = { requestId: 'int', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };

let db: TestDatabase;
const orms: MikroORM[] = [];
/** The time every replica reads. */
let now = new Date('2026-06-01T12:00:30.000Z');
const jobs: { job: Record<string, unknown>; ctx: CallContext }[] = [];
const deliveries = new Map<string, ScheduleDelivery>();
let failFarm = false;
let replicas: SchedulerService[] = [];
/** The users directory as the scheduler reads it; a user missing here is retired. */
const users = new Map<string, ScheduleAuthor>();
let directoryDown = false;

async function sql<R>(text: string, params: unknown[] = []): Promise<R[]> {
  const res = await orms[0]!.em
    .getConnection()
    .getKnex()
    .raw<{ rows: R[] }>(text, params as never);
  return res.rows;
}

async function replica(limits: Partial<SchedulerLimits> = {}): Promise<SchedulerService> {
  const orm = await openOrm({
    clientUrl: db.url,
    schema: SCHEMA_SCHEMA,
    entities: [],
    migrations: SCHEMA_MIGRATIONS,
    logger: createLogger('schema', 'silent'),
  });
  orms.push(orm);
  return new SchedulerService({
    store: new SchedulerRepository(orm.em.getConnection().getKnex(), natsNames(''), new SecretCipher(TEST_SECRETS_KEY)),
    farm: {
      createJob: async (job, ctx) => {
        // A round trip's worth of time, so replicas overlap while a run is open.
        await new Promise((r) => setTimeout(r, 5));
        if (failFarm) throw new Error('records is unavailable');
        jobs.push({ job, ctx });
        return newId();
      },
    },
    deliveries: {
      enqueue: async (d) => {
        // The notifier refuses a target it cannot parse, naming it.
        if (d.url.includes('refused')) throw new Error(`the notifier refused ${d.url}`);
        deliveries.set(d.deliveryId, d);
        return d.deliveryId;
      },
    },
    authors: {
      find: async (userId) => {
        if (directoryDown) throw new Error('records is unavailable');
        return users.get(userId) ?? null;
      },
    },
    digest: configDigest(Buffer.alloc(32, 9)),
    limits,
    clock: { now: () => now },
  });
}

const setClock = (iso: string) => {
  now = new Date(iso);
};

/** Every replica ticks at once, `times` times. */
async function tickAll(times = 3): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    await Promise.all(
      replicas.map(async (r) =>
        new SchedulerLoop(
          1000,
          () => r.runDue(),
          (err) => {
            throw err;
          },
        ).tick(),
      ),
    );
  }
}

async function create(body: Record<string, unknown>): Promise<any> {
  return replicas[0]!.create(JSON.stringify(body), admin);
}

const runsOf = async (id: string) => (await replicas[0]!.runs(id, { limit: 500 }, admin)).items;
const outboxEvents = async (type: string) =>
  (await sql<{ payload: StreamEvent }>(`select payload from schema.outbox where payload->>'entity_type' = ? order by seq`, [type])).map((r) => r.payload);

beforeAll(async () => {
  db = await createTestDatabase();
  replicas = [await replica(), await replica()];
});

afterAll(async () => {
  for (const orm of orms) await orm.close(true);
  await db?.drop();
});

beforeEach(async () => {
  await sql('delete from schema.schedule');
  jobs.length = 0;
  deliveries.clear();
  failFarm = false;
  directoryDown = false;
  users.clear();
  users.set(ADMIN, { role: 'Admin', canSignIn: true });
  users.set(ADMIN2, { role: 'Admin', canSignIn: true });
  setClock('2026-06-01T12:00:30.000Z');
});

const farmTarget = { kind: 'farm_job', job: { project_id: P, name: 'dailies', kind: 'playlist' } };

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
    failFarm = true;
    setClock('2026-06-01T14:00:00.500Z');
    await tickAll();
    const [failed] = await runsOf(job.id);
    expect(failed).toMatchObject({ scheduled_for: '2026-06-01T14:00:00.000Z', status: 'failed', result: null, error: 'records is unavailable' });
    // A failed run is not tried again.
    failFarm = false;
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
    directoryDown = true;
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
    for (let i = 0; i < 12; i += 1) await insert(a.id, new Date(now.getTime() - i * 60_000));
    for (let i = 0; i < 3; i += 1) await insert(b.id, new Date(now.getTime() - i * 60_000));
    for (let i = 0; i < 2; i += 1) await insert(b.id, new Date(now.getTime() - (100 + i) * 86_400_000));
    const pruner = await replica({ runsKept: 5, runRetentionDays: 90 });
    const repo = new SchedulerRepository(orms.at(-1)!.em.getConnection().getKnex(), natsNames(''), new SecretCipher(TEST_SECRETS_KEY));
    // A batch of 3 deletes 3; the service goes on until none is left.
    const before = new Date(now.getTime() - 90 * 86_400_000).toISOString();
    expect(await repo.pruneRuns(5, before, 3)).toBe(3);
    expect(await pruner.prune()).toBe(6);
    expect((await runsOf(a.id)).map((r) => r.started_at)).toEqual(Array.from({ length: 5 }, (_, i) => new Date(now.getTime() - i * 60_000).toISOString()));
    expect(await runsOf(b.id)).toHaveLength(3);
    expect(await pruner.prune()).toBe(0);
    // While one replica prunes, another one's call deletes nothing.
    for (let i = 12; i < 15; i += 1) await insert(a.id, new Date(now.getTime() - i * 60_000));
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
