/**
 * The scheduler (docs/api-notes.md, "Scheduler"; docs/scheduler.md), served by the schema
 * service's SchedulerService, which owns the schedules, their runs and the clock: these routes
 * check the role and the body, relay the request with the caller's principal and send the
 * service's answer (mapped between REST and protobuf in mappers/scheduler.mapper.ts). Every
 * route is for Admins only (403 before the body is read; the service checks again).
 */
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import {
  RunsQuery,
  ScheduleCreate,
  ScheduleDeleted,
  ScheduleList,
  ScheduleOut,
  SchedulePatch,
  SchedulePath,
  ScheduleRunList,
  ScheduleRunOut,
} from '../schemas/scheduler.schema.js';
import { runListText, runText, scheduleBodyRequest, scheduleDeletedText, scheduleListText, scheduleText } from '../mappers/scheduler.mapper.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN } from './route.roles.js';

const TAGS = ['scheduler'];

/** An answer's JSON text (mappers/scheduler.mapper.ts) as the response body. */
const reply = (text: string) => Reply.rawJson(text);

export function schedulerRoutes({ peers }: RouteDeps): AnyRoute[] {
  const scheduler = peers.scheduler;
  return [
    defineRoute({
      method: 'post',
      path: '/scheduler/schedules',
      operationId: 'createSchedule',
      summary: 'Creates a schedule (Admin): a farm job, a webhook or an event on a cron expression in a time zone.',
      description:
        'Answers the schedule with `next_run_at`, the first occurrence after now. Each occurrence runs once, however many replicas ' +
        'run, within a few seconds of its time; a local time that does not exist that day (clocks going forward) is skipped, one that ' +
        'occurs twice (clocks going back) runs once, at its first instant. A bad expression is 422 at `["body","cron"]`, an unknown ' +
        'time zone at `["body","timezone"]`; a farm job’s `job` is checked as `POST /farm/jobs` checks its body (records checks it ' +
        'again when a run submits it). The caller is its `created_by` and `updated_by`: the runs act as them. A studio has at most ' +
        '1,000 schedules (`SCHEDULER_MAX_SCHEDULES`): one more is 409 `limit_reached` (with `limit`). Recorded as a `Schedule` event ' +
        '(create) that every role can read, so its `target` shows only `kind`, `has_url`, `has_secret`, `has_payload` and a `digest`, ' +
        'never a URL, secret or payload.',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      body: ScheduleCreate,
      responses: { 200: { description: 'The schedule.', schema: ScheduleOut } },
      errors: [409, 503],
      handler: async ({ body, ctx }) => reply(scheduleText(await scheduler.createSchedule(scheduleBodyRequest(body), ctx))),
    }),
    defineRoute({
      method: 'get',
      path: '/scheduler/schedules',
      operationId: 'listSchedules',
      summary: 'Every schedule, oldest first (Admin).',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      responses: { 200: { description: 'The schedules.', schema: ScheduleList } },
      errors: [503],
      handler: async ({ ctx }) => reply(scheduleListText(await scheduler.listSchedules({}, ctx))),
    }),
    defineRoute({
      method: 'get',
      path: '/scheduler/schedules/{id}',
      operationId: 'getSchedule',
      summary: 'One schedule (Admin).',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      params: SchedulePath,
      responses: { 200: { description: 'The schedule.', schema: ScheduleOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(scheduleText(await scheduler.getSchedule({ id: params.id }, ctx))),
    }),
    defineRoute({
      method: 'patch',
      path: '/scheduler/schedules/{id}',
      operationId: 'updateSchedule',
      summary: 'Changes a schedule (Admin).',
      description:
        'Only the fields given change; `target` is replaced whole (a webhook given without `secret` keeps the secret the schedule ' +
        'had). Giving `cron`, `timezone` or `active` computes `next_run_at` again from now: occurrences passed while a schedule was ' +
        'inactive are never run, and `active: false` stops it (`next_run_at` null). A change that changes nothing writes nothing; ' +
        'otherwise the caller becomes `updated_by`, the Admin the runs act as from then on (re-activating a schedule the scheduler ' +
        'paused is such a change), and a `Schedule` event (update) names the changed fields (a target as `kind`, `has_url`, ' +
        '`has_secret`, `has_payload` and `digest` only).',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      params: SchedulePath,
      body: SchedulePatch,
      responses: { 200: { description: 'The schedule as it now is.', schema: ScheduleOut } },
      errors: [404, 503],
      handler: async ({ params, body, ctx }) => reply(scheduleText(await scheduler.updateSchedule({ id: params.id, ...scheduleBodyRequest(body) }, ctx))),
    }),
    defineRoute({
      method: 'delete',
      path: '/scheduler/schedules/{id}',
      operationId: 'deleteSchedule',
      summary: 'Deletes a schedule and its runs (Admin).',
      description: 'A run in progress finishes first. Recorded as a `Schedule` event (delete); the `ScheduleRun` events stay in the log.',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      params: SchedulePath,
      responses: { 200: { description: 'Deleted.', schema: ScheduleDeleted } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(scheduleDeletedText(await scheduler.deleteSchedule({ id: params.id }, ctx))),
    }),
    defineRoute({
      method: 'post',
      path: '/scheduler/schedules/{id}/run',
      operationId: 'runSchedule',
      summary: 'Runs a schedule’s target now, once (Admin).',
      description:
        'Whether the schedule is active or not; `next_run_at` does not move. Answers the run once its target ran (`scheduled_for` is ' +
        'the time of the request); a target that failed is still a run (`status: "failed"` with `error`). The run is made as the ' +
        'clock makes it: it acts as the schedule’s `updated_by` (the `ScheduleRun` event’s `actor`, a farm job’s submitter), who ' +
        'must still be a live Admin allowed to sign in, else the run fails with `principal_refused` and the schedule is paused; the ' +
        'caller is its `requested_by`. No body.',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      params: SchedulePath,
      responses: { 200: { description: 'The run.', schema: ScheduleRunOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => reply(runText(await scheduler.runSchedule({ id: params.id }, ctx))),
    }),
    defineRoute({
      method: 'get',
      path: '/scheduler/schedules/{id}/runs',
      operationId: 'listScheduleRuns',
      summary: 'The runs of a schedule, newest first (Admin).',
      description:
        'Paged: send `next_cursor` back as `cursor` while it is not null. Only the newest 1,000 runs of a schedule from the last 90 ' +
        'days are kept (`SCHEDULER_RUNS_KEPT`, `SCHEDULER_RUN_RETENTION_DAYS`); older ones are pruned hourly.',
      tags: TAGS,
      auth: 'bearer',
      allow: { roles: ADMIN, to: 'use the scheduler' },
      params: SchedulePath,
      query: RunsQuery,
      responses: { 200: { description: 'Runs.', schema: ScheduleRunList } },
      errors: [404, 503],
      handler: async ({ params, query, ctx }) => reply(runListText(await scheduler.listRuns({ id: params.id, limit: query.limit, cursor: query.cursor }, ctx))),
    }),
  ];
}
