/**
 * The hostile probe's checks of the scheduler and the custom actions (docs/api-notes.md, "Events",
 * "Scheduler"; docs/scheduler.md, "Who a run acts as", "Limits"): schedules and custom actions whose
 * URLs, secrets and farm job payloads carry strings made for this run, none of which may show in
 * `GET /events` read as a Viewer, an Artist or an Admin (their events still there, with a digest); an
 * author demoted to Artist, after which a run now fails, the schedule is paused once however many run
 * it at once, and another Admin's re-activation runs as them; the studio's schedules filled to the
 * cap, racing for the last places. Rule breaches are counted as problems; the made strings go to the
 * log scan.
 */
import { randomBytes } from 'node:crypto';
import { parseAnswer, probeCalls, type ProbeContext, type Secrets } from './hostile.calls.js';

/** SCHEDULER_MAX_SCHEDULES as the stack runs it (its default). */
const MAX_SCHEDULES = 1000;
/** Places left when the probe starts racing for them, and the creates racing. */
const RACE_PLACES = 10;
const RACERS = 30;
/** Schedules that never run on their own (once a year; the probe runs them now). */
const YEARLY = { cron: '0 0 1 1 *', catch_up: 'once' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function probeSchedules(ctx: ProbeContext): Promise<Secrets> {
  const { problem } = ctx;
  const { call, expect, user } = probeCalls(ctx);
  const admin = ctx.adminToken;
  const mark = randomBytes(9).toString('hex');
  const secrets: Secrets = {
    schedule_webhook_url: `xoxb-hostile-hook-${mark}`,
    schedule_webhook_url_moved: `xoxb-hostile-moved-${mark}`,
    schedule_webhook_secret: `hostile-schedule-secret-${mark}`,
    schedule_farm_payload: `hostile-farm-payload-${mark}`,
    action_url: `hostile-action-url-${mark}`,
    action_secret: `hostile-action-secret-${mark}`,
  };
  const hookUrl = (token: string) => `https://hooks.hostile.example/services/T0/B0/${token}`;
  const schedule = (label: string, token: string, body: Record<string, unknown>) => call(`schedule: ${label}`, 'POST', '/scheduler/schedules', token, body);

  ctx.log('schedules: Admin configuration with secret URLs, secrets and payloads');
  const author = await user(admin, 'Admin', 'sched-author@hostile.test');
  const viewer = await user(admin, 'Viewer', 'sched-viewer@hostile.test');
  const artist = await user(admin, 'Artist', 'sched-artist@hostile.test');
  const hook = expect(
    await schedule('webhook', author.token, {
      name: 'chat report',
      ...YEARLY,
      target: { kind: 'webhook', url: hookUrl(secrets.schedule_webhook_url!), secret: secrets.schedule_webhook_secret },
    }),
    [200],
    'a webhook schedule',
  );
  expect(
    await call('schedule: move the webhook', 'PATCH', `/scheduler/schedules/${hook?.id}`, author.token, {
      target: { kind: 'webhook', url: hookUrl(secrets.schedule_webhook_url_moved!) },
    }),
    [200],
    'moving the webhook',
  );
  const job = expect(
    await schedule('farm job', author.token, {
      name: 'nightly publish',
      ...YEARLY,
      target: { kind: 'farm_job', job: { project_id: ctx.projectId, name: 'publish', kind: 'publish', payload: { token: secrets.schedule_farm_payload } } },
    }),
    [200],
    'a farm job schedule',
  );
  const tick = expect(await schedule('event', author.token, { name: 'tick', ...YEARLY, target: { kind: 'event', name: 'tick' } }), [200], 'an event schedule');
  expect(
    await call('custom actions with secret URLs', 'PUT', '/actions/custom', admin, {
      actions: [
        { id: 'publish', label: 'Publish', url: `https://hooks.hostile.example/${secrets.action_url}`, entity_types: ['Shot'], secret: secrets.action_secret },
        { id: 'notify', label: 'Notify', url: `https://hooks.hostile.example/notify/${secrets.action_url}`, entity_types: ['Shot'] },
      ],
    }),
    [200],
    'custom actions',
  );
  const run = expect(await call('schedule: run the webhook now', 'POST', `/scheduler/schedules/${hook?.id}/run`, admin), [200], 'running the webhook now');
  if (run?.status !== 'ok') problem(`a webhook schedule's run now did not run: ${JSON.stringify(run).slice(0, 200)}`);

  ctx.log('schedules: the event log as a Viewer, an Artist and an Admin');
  const readLog = async (token: string): Promise<any[]> => {
    const out: any[] = [];
    for (let after = 0; ;) {
      const page = parseAnswer(await call('events page', 'GET', `/events?after=${after}&limit=1000`, token));
      const items: any[] = Array.isArray(page?.items) ? page.items : [];
      out.push(...items);
      if (items.length === 0 || (items.length < 1000 && !page?.next_cursor)) return out;
      after = items[items.length - 1].id;
    }
  };
  // Events reach the log shortly after their commit: wait (a while at most) for the run's.
  for (let i = 0; i < 50 && !(await readLog(admin)).some((e) => e.entity_id === run?.id); i++) await sleep(200);
  for (const [who, token] of [
    ['Viewer', viewer.token],
    ['Artist', artist.token],
    ['Admin', admin],
  ] as const) {
    const log = await readLog(token);
    const text = JSON.stringify(log);
    for (const [name, s] of Object.entries(secrets)) if (text.includes(s)) problem(`GET /events as ${who} shows the ${name}`);
    const changes = log.filter((e) => e.entity_type === 'Schedule' && (e.entity_id === hook?.id || e.entity_id === job?.id)).map((e) => e.changes);
    if (changes.length !== 3 || changes.some((c) => typeof c?.target?.digest !== 'string')) {
      problem(
        `GET /events as ${who}: expected 3 Schedule events of the secret schedules, each with a target digest; got ${JSON.stringify(changes).slice(0, 200)}`,
      );
    }
    const actions = log.find((e) => e.entity_type === 'Schema.Actions')?.changes?.actions;
    if (!Array.isArray(actions) || actions.length !== 2 || actions.some((a: any) => typeof a?.digest !== 'string' || a?.has_url !== true)) {
      problem(`GET /events as ${who}: the Schema.Actions event is missing or has no digests (${JSON.stringify(actions).slice(0, 200)})`);
    }
  }

  ctx.log('schedules: the author demoted, then runs');
  expect(await call('demote the author', 'PATCH', `/entities/User/${author.id}`, admin, { data: { role: 'Artist' } }), [200], 'demoting the author');
  const refused = expect(await call('run after the demotion', 'POST', `/scheduler/schedules/${tick?.id}/run`, admin), [200], 'a run after the demotion');
  if (refused?.status !== 'failed' || !String(refused?.error).startsWith('principal_refused')) {
    problem(`a demoted author's schedule ran: ${JSON.stringify(refused).slice(0, 200)}`);
  }
  const paused = expect(await call('the schedule after', 'GET', `/scheduler/schedules/${tick?.id}`, admin), [200], 'reading the schedule');
  if (paused?.active !== false || paused?.next_run_at !== null) problem(`a demoted author's schedule is still active: ${JSON.stringify(paused).slice(0, 200)}`);
  // Eight at once on another of the author's schedules: eight failed runs, one pause.
  const racing = await Promise.all(
    Array.from({ length: 8 }, () => call('concurrent run after the demotion', 'POST', `/scheduler/schedules/${hook?.id}/run`, admin)),
  );
  const ran = racing.map(parseAnswer).filter((r) => r?.status !== 'failed').length;
  if (ran > 0) problem(`${ran} of 8 concurrent runs of a demoted author's schedule were not refused`);
  let pauses = -1;
  for (let i = 0; i < 50; i++) {
    const log = await readLog(admin);
    pauses = log.filter((e) => e.entity_type === 'Schedule' && e.entity_id === hook?.id && e.changes?.reason !== undefined).length;
    if (pauses > 0 && log.filter((e) => e.entity_type === 'ScheduleRun' && e.changes?.schedule_id === hook?.id).length >= 9) break;
    await sleep(200);
  }
  if (pauses !== 1) problem(`8 concurrent refused runs paused the schedule ${pauses} times, expected once`);
  // Another Admin takes it over by re-activating it: it runs as them.
  const taken = expect(
    await call('re-activate as another Admin', 'PATCH', `/scheduler/schedules/${tick?.id}`, admin, { active: true }),
    [200],
    're-activating the schedule',
  );
  const again = expect(await call('run after the take-over', 'POST', `/scheduler/schedules/${tick?.id}/run`, admin), [200], 'a run after the take-over');
  if (taken?.updated_by === author.id || again?.status !== 'ok') {
    problem(`a schedule taken over by another Admin did not run as them: ${JSON.stringify({ taken, again }).slice(0, 200)}`);
  }

  ctx.log(`schedules: filling the studio to its cap (${MAX_SCHEDULES}), ${RACERS} racing for the last ${RACE_PLACES} places`);
  const listed = expect(await call('list schedules', 'GET', '/scheduler/schedules', admin), [200], 'listing schedules');
  let made = Array.isArray(listed?.items) ? listed.items.length : 0;
  const filler = (i: number) => schedule('filler', admin, { name: `filler ${i}`, ...YEARLY, target: { kind: 'event', name: 'filler' } });
  while (made < MAX_SCHEDULES - RACE_PLACES) {
    const n = Math.min(25, MAX_SCHEDULES - RACE_PLACES - made);
    const answers = await Promise.all(Array.from({ length: n }, (_, k) => filler(made + k)));
    for (const a of answers) expect(a, [200], 'a schedule below the cap');
    made += n;
  }
  const race = await Promise.all(Array.from({ length: RACERS }, (_, k) => filler(MAX_SCHEDULES + k)));
  const won = race.filter((a) => a.status === 200).length;
  const capped = race.filter((a) => a.status === 409 && parseAnswer(a)?.code === 'limit_reached' && parseAnswer(a)?.limit === MAX_SCHEDULES).length;
  if (won !== RACE_PLACES || capped !== RACERS - RACE_PLACES) {
    problem(`racing for the last ${RACE_PLACES} schedules: ${won} created and ${capped} refused with limit_reached of ${RACERS}`);
  }
  const total = expect(await call('list schedules at the cap', 'GET', '/scheduler/schedules', admin), [200], 'listing schedules')?.items?.length;
  if (total !== MAX_SCHEDULES) problem(`the studio holds ${total} schedules, the cap is ${MAX_SCHEDULES}`);
  expect(await filler(-1), [409], 'one schedule past the cap');
  return secrets;
}
