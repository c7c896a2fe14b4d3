/**
 * The scheduler against the whole stack on the real clock (docs/api-notes.md, "Scheduler";
 * docs/scheduler.md): Admin only (401, 403); a bad cron or time zone is 422 at its field; three
 * every-minute schedules — a farm job, a signed webhook delivered by the notifier to a local HTTP
 * target, an event — each run once per minute, within 5 s of the minute, for two minutes: the
 * FarmJob records exist, submitted for the schedule's creator, the webhook receiver got each run's
 * body signed, and the log holds `Schedule` and `ScheduleRun` events (the event target's name and
 * payload in `changes`); `active: false` stops a schedule (a stopped one never runs over those two
 * minutes); run now answers its run, listed first, and leaves a stopped schedule stopped;
 * a deleted schedule is 404.
 */
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';

const NOTIFIER_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '400',
  WEBHOOK_TIMEOUT_MS: '1500',
  NOTIFIER_POLL_MS: '200',
};

const SECRET = 'a-schedule-secret-of-32-characters';

describe('scheduler (whole stack, real clock)', () => {
  let e: E2EStack;
  let rx: WebhookReceiver;
  let admin: Session;
  let artist: Session;
  let projectId: string;
  const schedules: Record<string, any> = {};
  let stopped: any;

  beforeAll(async () => {
    rx = await startWebhookReceiver({ keepBodies: true });
    e = await startE2EStack('scheduler', { notifier: NOTIFIER_ENV });
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Feature', code: 'FEAT' } }), 200, 'project').id;
  }, 120_000);

  afterAll(async () => {
    await e?.teardown();
    await rx?.close();
  });

  it('is Admin only, and refuses a bad cron or time zone at its field', async () => {
    const body = { name: 'n', cron: '@daily', target: { kind: 'event', name: 'x' } };
    expect((await e.api.post('/scheduler/schedules', body)).status).toBe(401);
    const denied = await artist.api.post('/scheduler/schedules', body);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await artist.api.get('/scheduler/schedules')).status).toBe(403);
    const badCron = await admin.api.post('/scheduler/schedules', { ...body, cron: '0 0 31 2 * *' });
    expect(badCron.status).toBe(422);
    expect(badCron.body.detail.map((d: any) => d.loc)).toEqual([['body', 'cron']]);
    const badZone = await admin.api.post('/scheduler/schedules', { ...body, timezone: 'Europe/Atlantis' });
    expect(badZone.status).toBe(422);
    expect(badZone.body.detail.map((d: any) => d.loc)).toEqual([['body', 'timezone']]);
    const daily = expectStatus(await admin.api.post('/scheduler/schedules', { ...body, timezone: 'Asia/Tokyo' }), 200, 'daily');
    // Midnight in Tokyo is 15:00 UTC.
    expect(daily.next_run_at).toMatch(/T15:00:00\.000Z$/);
    expect(Date.parse(daily.next_run_at) - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
  });

  it('runs every-minute schedules of each target kind once per minute, within 5 s, on the real clock', async () => {
    const every = (name: string, target: unknown) => admin.api.post('/scheduler/schedules', { name, cron: '* * * * *', target });
    schedules.job = expectStatus(await every('render sweep', { kind: 'farm_job', job: { project_id: projectId, name: 'sweep', kind: 'cleanup' } }), 200, 'job');
    schedules.hook = expectStatus(await every('report', { kind: 'webhook', url: rx.target('report'), secret: SECRET }), 200, 'hook');
    schedules.event = expectStatus(await every('tick', { kind: 'event', name: 'tick', payload: { every: 'minute' } }), 200, 'event');
    // A fourth every-minute schedule, stopped at once: the clock must never run it while the
    // others run twice (checked below, so no extra minute is waited for it).
    const idle = expectStatus(await every('idle', { kind: 'event', name: 'idle' }), 200, 'idle');
    stopped = expectStatus(await admin.api.patch(`/scheduler/schedules/${idle.id}`, { active: false }), 200, 'stop');
    expect(stopped).toMatchObject({ active: false, next_run_at: null });
    expect(schedules.hook.target).toEqual({ kind: 'webhook', url: rx.target('report'), has_secret: true });
    for (const sc of Object.values(schedules)) expect(Date.parse(sc.next_run_at) % 60_000).toBe(0);

    const runsOf = async (s: any) => expectStatus(await admin.api.get(`/scheduler/schedules/${s.id}/runs`), 200, 'runs').items as any[];
    const runs: Record<string, any[]> = {};
    for (const [key, s] of Object.entries(schedules)) {
      runs[key] = await eventually(
        async () => {
          const items = await runsOf(s);
          return items.length >= 2 ? items : undefined;
        },
        150_000,
        `two runs of ${key}`,
      );
    }
    for (const [key, items] of Object.entries(runs)) {
      // Once per minute: two runs, newest first, one minute apart, each within 5 s of its minute.
      expect(items, key).toHaveLength(2);
      const [second, first] = items;
      expect(first.scheduled_for, key).toBe(schedules[key].next_run_at);
      expect(Date.parse(second.scheduled_for) - Date.parse(first.scheduled_for), key).toBe(60_000);
      for (const r of items) {
        expect(r.status, key).toBe('ok');
        const late = Date.parse(r.started_at) - Date.parse(r.scheduled_for);
        expect(late, key).toBeGreaterThanOrEqual(0);
        expect(late, key).toBeLessThan(5000);
      }
    }

    // farm_job: FarmJob records, submitted for the schedule's creator.
    for (const r of runs.job!) {
      const job = expectStatus(await admin.api.get(`/entities/FarmJob/${r.result.job_id}`), 200, 'farm job');
      expect(job).toMatchObject({ project_id: projectId, status: 'queued', created_by: admin.user.id, data: { name: 'sweep', kind: 'cleanup' } });
    }
    // webhook: delivered by the notifier, signed, one body per run.
    await rx.waitFor(() => rx.delivered('report').length >= 2, 20_000, 'two deliveries');
    const bodies = rx.delivered('report').map((d) => {
      expect(verifySignature(SECRET, d.body, d.headers['x-signature'])).toBe(true);
      expect(d.headers['x-action-id']).toBe(`schedule:${schedules.hook.id}`);
      return JSON.parse(d.body);
    });
    expect(bodies.slice(0, 2)).toEqual(
      [...runs.hook!].reverse().map((r) => ({ schedule_id: schedules.hook.id, run_id: r.id, scheduled_for: r.scheduled_for })),
    );
    // event: nothing but the run's ScheduleRun event, with the name and payload.
    const log = await eventsAfter(admin.api, 0, '&entity_type=ScheduleRun');
    for (const [key, items] of Object.entries(runs)) {
      for (const r of items) {
        const ev = log.find((x) => x.entity_id === r.id);
        expect(ev, `${key} run event`).toMatchObject({ entity_type: 'ScheduleRun', action: 'create', actor: admin.user.id });
        expect(ev.changes).toMatchObject({ schedule_id: schedules[key].id, scheduled_for: r.scheduled_for, status: 'ok' });
      }
    }
    expect(log.find((x) => x.entity_id === runs.event![0].id).changes).toMatchObject({ kind: 'event', name: 'tick', payload: { every: 'minute' } });
    const created = await eventsAfter(admin.api, 0, '&entity_type=Schedule');
    expect(created.filter((x) => x.action === 'create').map((x) => x.entity_id)).toEqual(expect.arrayContaining(Object.values(schedules).map((s) => s.id)));
    // `active: false` stops a schedule: two minute boundaries passed and it never ran.
    expect(await runsOf(stopped)).toEqual([]);
  }, 200_000);

  it('runs a stopped schedule now, once (listed first); a deleted one is 404', async () => {
    const s = stopped;
    const run = expectStatus(await admin.api.post(`/scheduler/schedules/${s.id}/run`, undefined), 200, 'run now');
    expect(run).toMatchObject({ status: 'ok', result: { name: 'idle' }, error: null });
    expect(Math.abs(Date.parse(run.scheduled_for) - Date.now())).toBeLessThan(10_000);
    const page = expectStatus(await admin.api.get(`/scheduler/schedules/${s.id}/runs?limit=1`), 200, 'runs');
    expect(page.items.map((r: any) => r.id)).toEqual([run.id]);
    // Run now leaves the schedule stopped.
    expect(expectStatus(await admin.api.get(`/scheduler/schedules/${s.id}`), 200, 'schedule')).toMatchObject({ active: false, next_run_at: null });
    const runNow2 = expectStatus(await admin.api.post(`/scheduler/schedules/${schedules.event.id}/run`, undefined), 200, 'run now 2');
    const newest = expectStatus(await admin.api.get(`/scheduler/schedules/${schedules.event.id}/runs?limit=1`), 200, 'runs');
    expect(newest.items.map((r: any) => r.id)).toEqual([runNow2.id]);
    expect(newest.next_cursor).toEqual(expect.any(String));

    expect((await admin.api.delete(`/scheduler/schedules/${s.id}`)).status).toBe(200);
    expect((await admin.api.get(`/scheduler/schedules/${s.id}`)).status).toBe(404);
    expect((await admin.api.post(`/scheduler/schedules/${s.id}/run`, undefined)).status).toBe(404);
    const list = expectStatus(await admin.api.get('/scheduler/schedules'), 200, 'list').items.map((x: any) => x.id);
    expect(list).not.toContain(s.id);
    expect(list).toEqual(expect.arrayContaining([schedules.job.id, schedules.hook.id, schedules.event.id]));
  }, 120_000);
});
