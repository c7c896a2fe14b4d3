/**
 * The scheduler's rules against the whole stack, without waiting for the clock's minutes (docs/scheduler.md,
 * "Who a run acts as", "Limits", "Events"; docs/api-notes.md, "Events"). A clock run is made by moving a
 * schedule's `next_run_at` into the past in the database (yearly expressions with `catch_up: "once"`, so the
 * next tick runs this year's occurrence once); everything else goes through the API.
 *
 * - A webhook schedule whose URL and secret are recognisable, a farm job schedule with a secret in its payload
 *   and custom actions with secret URLs: none of those strings is in `GET /events` read as a Viewer, an Artist
 *   or an Admin, nor on a Viewer's WebSocket, while the `Schedule` and `Schema.Actions` events are there with
 *   their digests (and the Admin's own routes still answer the URLs).
 * - An author demoted to Artist (PATCH of their User by another Admin): the clock's run fails with the reason
 *   and the schedule is paused, with a `Schedule` event naming why. A retired author: a run now fails likewise.
 * - Another Admin's PATCH makes them `updated_by`, and the next clock run acts as them (the run's event
 *   `actor`, the farm job's `created_by`).
 * - Runs past SCHEDULER_RUNS_KEPT are pruned; a schedule past SCHEDULER_MAX_SCHEDULES is 409 `limit_reached`.
 */
import { startWebhookReceiver, type WebhookReceiver } from '@reelbase/lib-testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError } from './support/expect.helpers.js';
import { openEventSocket } from './support/ws.client.js';

const MAX_SCHEDULES = 10;
const RUNS_KEPT = 3;

const HOOK_TOKEN = 'xoxb-e2e-hook-token-recognisable';
const HOOK_TOKEN_2 = 'xoxb-e2e-second-hook-token-recognisable';
const HOOK_SECRET = 'e2e-schedule-signing-secret-recognisable';
const PAYLOAD_SECRET = 'e2e-farm-payload-secret-recognisable';
const ACTION_TOKEN = 'e2e-action-url-token-recognisable';
const ACTION_SECRET = 'e2e-action-signing-secret-recognisable';
const ACTION_HOST = 'hooks.e2e-actions.example';
const HIDDEN = [HOOK_TOKEN, HOOK_TOKEN_2, HOOK_SECRET, PAYLOAD_SECRET, ACTION_TOKEN, ACTION_SECRET, ACTION_HOST];

/** A schedule that only runs when the test moves `next_run_at` (once a year otherwise). */
const YEARLY = { cron: '0 0 1 1 *', catch_up: 'once' };

describe('scheduler rules (whole stack)', () => {
  let e: E2EStack;
  let rx: WebhookReceiver;
  let db: pg.Client;
  let ada: Session;
  let ben: Session;
  let viewer: Session;
  let artist: Session;
  let projectId: string;

  beforeAll(async () => {
    rx = await startWebhookReceiver({ keepBodies: true });
    e = await startE2EStack('scheduler-rules', {
      schema: { SCHEDULER_MAX_SCHEDULES: String(MAX_SCHEDULES), SCHEDULER_RUNS_KEPT: String(RUNS_KEPT), SCHEDULER_PRUNE_MS: '1000' },
      notifier: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', NOTIFIER_POLL_MS: '200' },
    });
    db = new pg.Client({ connectionString: e.db.url });
    await db.connect();
    ada = await bootstrapAdmin(e.api);
    ben = await createUser(ada.api, 'Admin', 'ben@studio.test');
    viewer = await createUser(ada.api, 'Viewer', 'vic@studio.test');
    artist = await createUser(ada.api, 'Artist', 'art@studio.test');
    projectId = expectStatus(await ada.api.post('/entities/Project', { data: { name: 'Rules', code: 'RULES' } }), 200, 'project').id;
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await e?.teardown();
    await rx?.close();
  });

  const create = async (who: Session, body: Record<string, unknown>) => expectStatus(await who.api.post('/scheduler/schedules', body), 200, 'create schedule');
  const runsOf = async (id: string) => expectStatus(await ada.api.get(`/scheduler/schedules/${id}/runs`), 200, 'runs').items as any[];
  /** Makes the schedule due: the next tick runs this year's occurrence (catch_up once). */
  const makeDue = async (id: string) => {
    await db.query(`update schema.schedule set next_run_at = '2000-01-01T00:00:00Z' where id = $1`, [id]);
  };
  /** The log as an Admin reads it, once `done` holds of it (events reach the log shortly after their commit). */
  const logWhen = (done: (log: any[]) => boolean, what: string, query = '') =>
    eventually(
      async () => {
        const log = await eventsAfter(ada.api, 0, query);
        return done(log) ? log : undefined;
      },
      30_000,
      what,
    );
  const firstRun = (id: string) =>
    eventually(
      async () => {
        const items = await runsOf(id);
        return items.length > 0 ? items : undefined;
      },
      30_000,
      `a run of ${id}`,
    );

  it('shows no webhook URL, secret, farm payload or action URL in GET /events for any role, nor on the WebSocket', async () => {
    const hook = await create(ben, {
      name: 'chat report',
      ...YEARLY,
      target: { kind: 'webhook', url: rx.target(`services/T0/B0/${HOOK_TOKEN}`), secret: HOOK_SECRET },
    });
    const job = await create(ben, {
      name: 'nightly publish',
      ...YEARLY,
      target: { kind: 'farm_job', job: { project_id: projectId, name: 'publish', kind: 'publish', payload: { token: PAYLOAD_SECRET } } },
    });
    expectStatus(
      await ben.api.patch(`/scheduler/schedules/${hook.id}`, { target: { kind: 'webhook', url: rx.target(`services/T0/B0/${HOOK_TOKEN_2}`) } }),
      200,
      'move the hook',
    );
    const run = expectStatus(await ben.api.post(`/scheduler/schedules/${hook.id}/run`), 200, 'run the hook now');
    expect(run).toMatchObject({ status: 'ok', result: { delivery_id: run.id }, requested_by: ben.user.id });
    await rx.waitFor(() => rx.delivered(`services/T0/B0/${HOOK_TOKEN_2}`).length === 1, 20_000, 'the delivery');
    expectStatus(
      await ada.api.call('PUT', '/actions/custom', {
        body: {
          actions: [
            { id: 'publish', label: 'Publish', url: `https://${ACTION_HOST}/${ACTION_TOKEN}`, entity_types: ['Shot'], secret: ACTION_SECRET },
            { id: 'notify', label: 'Notify', url: `https://${ACTION_HOST}/notify/${ACTION_TOKEN}`, entity_types: ['Shot'], roles: ['Supervisor'] },
          ],
        },
      }),
      200,
      'custom actions',
    );
    // The values are there for Admins, through their own routes.
    expect(expectStatus(await ada.api.get(`/scheduler/schedules/${hook.id}`), 200, 'hook').target.url).toContain(HOOK_TOKEN_2);
    expect(expectStatus(await ada.api.get(`/scheduler/schedules/${job.id}`), 200, 'job').target.job.payload).toEqual({ token: PAYLOAD_SECRET });
    expect(JSON.stringify(expectStatus(await ada.api.get('/actions/custom'), 200, 'actions'))).toContain(ACTION_TOKEN);

    const all = await logWhen(
      (log) => log.some((x) => x.entity_type === 'Schema.Actions') && log.some((x) => x.entity_type === 'ScheduleRun' && x.entity_id === run.id),
      'the events of the changes',
    );
    const socket = openEventSocket(e.stack.url, viewer.token, 0);
    try {
      await socket.opened;
      const live = await socket.waitFor(all.length, 30_000);
      for (const [who, log] of [
        ['Viewer', await eventsAfter(viewer.api, 0)],
        ['Artist', await eventsAfter(artist.api, 0)],
        ['Admin', all],
        ['Viewer WebSocket', live],
      ] as const) {
        const text = JSON.stringify(log);
        for (const hidden of HIDDEN) expect(text.includes(hidden), `${who} reads ${hidden}`).toBe(false);
        // The events are there, saying that something changed.
        const hookEvents = log.filter((x: any) => x.entity_type === 'Schedule' && x.entity_id === hook.id);
        expect(
          hookEvents.map((x: any) => x.action),
          who,
        ).toEqual(['create', 'update']);
        for (const x of hookEvents) {
          expect(x.changes.target, who).toEqual({ kind: 'webhook', has_url: true, has_secret: true, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
        }
        expect(hookEvents[0].changes.target.digest, who).not.toBe(hookEvents[1].changes.target.digest);
        expect(log.find((x: any) => x.entity_type === 'Schedule' && x.entity_id === job.id)?.changes.target, who).toEqual({
          kind: 'farm_job',
          has_payload: true,
          digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
        expect(log.find((x: any) => x.entity_type === 'ScheduleRun' && x.entity_id === run.id)?.changes, who).toMatchObject({
          kind: 'webhook',
          status: 'ok',
          result: { delivery_id: run.id },
        });
        const actions = log.find((x: any) => x.entity_type === 'Schema.Actions')?.changes.actions;
        expect(actions, who).toEqual([
          expect.objectContaining({ id: 'publish', has_url: true, has_secret: true, digest: expect.stringMatching(/^[0-9a-f]{64}$/) }),
          expect.objectContaining({ id: 'notify', has_url: true, has_secret: false, digest: expect.stringMatching(/^[0-9a-f]{64}$/) }),
        ]);
      }
    } finally {
      await socket.close();
    }
  }, 120_000);

  it('an author demoted by another Admin: the clock’s run fails with the reason and the schedule is paused', async () => {
    const cy = await createUser(ada.api, 'Admin', 'cy@studio.test');
    const s = await create(cy, { name: 'cy’s tick', ...YEARLY, target: { kind: 'event', name: 'tick', payload: { n: 1 } } });
    expect(s).toMatchObject({ created_by: cy.user.id, updated_by: cy.user.id, active: true });
    expectStatus(await ada.api.patch(`/entities/User/${cy.user.id}`, { data: { role: 'Artist' } }), 200, 'demote');
    await makeDue(s.id);
    const [run] = await firstRun(s.id);
    expect(run).toMatchObject({ status: 'failed', result: null, requested_by: null });
    expect(run.error).toMatch(/^principal_refused: the schedule runs as user .*, who is no longer an Admin \(now Artist\)/);
    expect(expectStatus(await ada.api.get(`/scheduler/schedules/${s.id}`), 200, 'paused')).toMatchObject({ active: false, next_run_at: null });
    const log = (
      await logWhen((l) => l.some((x) => x.entity_id === run.id) && l.some((x) => x.entity_id === s.id && x.action === 'update'), 'the run’s events')
    ).filter((x) => x.entity_id === s.id || x.entity_id === run.id);
    expect(log.find((x) => x.entity_type === 'ScheduleRun')).toMatchObject({ actor: cy.user.id, changes: { status: 'failed', error: run.error } });
    expect(log.find((x) => x.entity_type === 'ScheduleRun').changes).not.toHaveProperty('payload');
    expect(log.filter((x) => x.entity_type === 'Schedule' && x.action === 'update')).toEqual([
      expect.objectContaining({
        actor: null,
        changes: { active: false, next_run_at: null, reason: expect.stringMatching(/no longer an Admin \(now Artist\)/) },
      }),
    ]);
  }, 60_000);

  it('a retired author: a run now fails with the reason and the schedule is paused', async () => {
    const dee = await createUser(ada.api, 'Admin', 'dee@studio.test');
    const s = await create(dee, { name: 'dee’s tick', ...YEARLY, target: { kind: 'event', name: 'tick' } });
    expectStatus(await ada.api.delete(`/entities/User/${dee.user.id}`), 200, 'retire');
    const run = expectStatus(await ada.api.post(`/scheduler/schedules/${s.id}/run`), 200, 'run now');
    expect(run).toMatchObject({ status: 'failed', result: null, requested_by: ada.user.id });
    expect(run.error).toMatch(/^principal_refused: .* no longer exists or is retired/);
    expect(expectStatus(await ada.api.get(`/scheduler/schedules/${s.id}`), 200, 'paused')).toMatchObject({ active: false, next_run_at: null });
    const isPause = (x: any) => x.entity_id === s.id && x.action === 'update';
    const pauses = (await logWhen((l) => l.some(isPause), 'the pause', '&entity_type=Schedule')).filter(isPause);
    expect(pauses).toEqual([expect.objectContaining({ actor: null, changes: expect.objectContaining({ reason: expect.stringMatching(/retired/) }) })]);
  }, 60_000);

  it('another Admin’s PATCH makes them updated_by, and the next run acts as them', async () => {
    const s = await create(ada, { name: 'handover', ...YEARLY, target: { kind: 'farm_job', job: { project_id: projectId, name: 'sweep', kind: 'cleanup' } } });
    const changed = expectStatus(await ben.api.patch(`/scheduler/schedules/${s.id}`, { name: 'handed over' }), 200, 'take over');
    expect(changed).toMatchObject({ created_by: ada.user.id, updated_by: ben.user.id });
    await makeDue(s.id);
    const [run] = await firstRun(s.id);
    expect(run).toMatchObject({ status: 'ok', requested_by: null });
    const ev = (await logWhen((l) => l.some((x) => x.entity_id === run.id), 'the run’s event', '&entity_type=ScheduleRun')).find((x) => x.entity_id === run.id);
    expect(ev).toMatchObject({ actor: ben.user.id, project_id: projectId });
    expect(expectStatus(await ada.api.get(`/entities/FarmJob/${run.result.job_id}`), 200, 'farm job')).toMatchObject({ created_by: ben.user.id });
    const update = (await eventsAfter(ada.api, 0, '&entity_type=Schedule')).find((x) => x.entity_id === s.id && x.action === 'update');
    expect(update).toMatchObject({ actor: ben.user.id, changes: { name: 'handed over', updated_by: ben.user.id } });
  }, 60_000);

  it(`keeps the newest ${RUNS_KEPT} runs of a schedule`, async () => {
    const s = await create(ada, { name: 'often', ...YEARLY, target: { kind: 'event', name: 'often' } });
    const made: string[] = [];
    for (let i = 0; i < RUNS_KEPT + 2; i += 1) made.push(expectStatus(await ada.api.post(`/scheduler/schedules/${s.id}/run`), 200, 'run now').id);
    const kept = await eventually(
      async () => {
        const items = await runsOf(s.id);
        return items.length === RUNS_KEPT ? items : undefined;
      },
      30_000,
      'pruned runs',
    );
    expect(kept.map((r) => r.id)).toEqual(made.slice(-RUNS_KEPT).reverse());
    // Their events stay in the log.
    const logged = await logWhen((l) => made.every((id) => l.some((x) => x.entity_id === id)), 'every run’s event', '&entity_type=ScheduleRun');
    expect(logged.map((x) => x.entity_id)).toEqual(expect.arrayContaining(made));
  }, 60_000);

  it(`refuses schedule ${MAX_SCHEDULES + 1} with 409 limit_reached, and writes nothing`, async () => {
    const existing = expectStatus(await ada.api.get('/scheduler/schedules'), 200, 'list').items.length as number;
    let last: any;
    for (let i = existing; i < MAX_SCHEDULES; i += 1) last = await create(ada, { name: `filler ${i}`, ...YEARLY, target: { kind: 'event', name: 'f' } });
    const refused = await ada.api.post('/scheduler/schedules', { name: 'one too many', ...YEARLY, target: { kind: 'event', name: 'f' } });
    expectError(refused, 409, 'limit_reached');
    expect(refused.body).toEqual({ detail: expect.stringContaining(`${MAX_SCHEDULES} schedules`), code: 'limit_reached', limit: MAX_SCHEDULES });
    expect(expectStatus(await ada.api.get('/scheduler/schedules'), 200, 'list').items).toHaveLength(MAX_SCHEDULES);
    // Nothing written: once a later change is in the log (events reach it in commit order), no event names it.
    expectStatus(await ada.api.delete(`/scheduler/schedules/${last.id}`), 200, 'delete one');
    const log = await logWhen((l) => l.some((x) => x.entity_id === last.id && x.action === 'delete'), 'the delete', '&entity_type=Schedule');
    expect(log.filter((x) => x.changes.name === 'one too many')).toEqual([]);
    // Below the cap again, a create is taken.
    expect(await create(ada, { name: 'room again', ...YEARLY, target: { kind: 'event', name: 'f' } })).toMatchObject({ name: 'room again' });
  }, 60_000);
});
