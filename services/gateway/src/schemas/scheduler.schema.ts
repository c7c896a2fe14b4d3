/**
 * Bodies and answers of the scheduler routes (docs/api-notes.md, "Scheduler"; docs/scheduler.md).
 * A `farm_job` target's `job` is validated with the body schema of `POST /farm/jobs` itself; the
 * cron expression and the time zone with the rules the schema service applies (lib-platform's
 * schedule policy), at `["body","cron"]` and `["body","timezone"]`, beside every other problem.
 */
import {
  CATCH_UP_MODES,
  MAX_CRON_LENGTH,
  MAX_TIMEZONE_LENGTH,
  RUNS_PAGE,
  SCHEDULE_NAMES,
  SCHEDULE_TEXT_CHARS,
  WebhookSecret,
  cronProblem,
  timezoneProblem,
} from '@reelbase/lib-platform';
import { z } from 'zod';
import { OutboundUrl, Uuid } from './common.schema.js';
import { FarmJobCreate } from './farm.schema.js';

const Name = z.string().min(1).max(SCHEDULE_TEXT_CHARS);

const Cron = z
  .string()
  .max(MAX_CRON_LENGTH)
  .superRefine((v, ctx) => {
    const why = cronProblem(v);
    if (why) ctx.addIssue({ code: 'custom', message: why, input: v });
  })
  .describe(
    `Five fields (minute hour day-of-month month day-of-week; \`*\`, numbers or names, ranges, lists and \`/\` steps), or one of ${SCHEDULE_NAMES.map((n) => `\`${n}\``).join(', ')}.`,
  );

const Timezone = z
  .string()
  .max(MAX_TIMEZONE_LENGTH)
  .superRefine((v, ctx) => {
    const why = timezoneProblem(v);
    if (why) ctx.addIssue({ code: 'custom', message: why, input: v });
  })
  .describe('An IANA time zone name (`Europe/London`); the expression is read in its local time.');

export const ScheduleTarget = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('farm_job'), job: FarmJobCreate.describe('The body of `POST /farm/jobs`: each run submits this job.') }),
    z.strictObject({
      kind: z.literal('webhook'),
      url: OutboundUrl.describe('Where each run is POSTed: `{"schedule_id","run_id","scheduled_for"}`.'),
      secret: WebhookSecret.nullable()
        .optional()
        .describe('Signs each delivery (`X-Signature: sha256=…`). On PATCH, absent keeps the secret the schedule had; `null` removes it. Never returned.'),
    }),
    z.strictObject({
      kind: z.literal('event'),
      name: Name.describe('Carried, with `payload`, in the `changes` of the run’s `ScheduleRun` event.'),
      payload: z.unknown().optional().describe('Any JSON value.'),
    }),
  ])
  .meta({ id: 'ScheduleTarget', description: 'What each run does: submit a farm job, deliver a webhook, or only write its `ScheduleRun` event.' });

export const ScheduleCreate = z
  .strictObject({
    name: Name,
    cron: Cron,
    timezone: Timezone.default('UTC'),
    target: ScheduleTarget,
    active: z.boolean().default(true),
    catch_up: z
      .enum(CATCH_UP_MODES)
      .default('skip')
      .describe('Occurrences missed while no scheduler ran (more than 60 s late): `skip` runs none of them, `once` runs the latest one.'),
  })
  .meta({ id: 'ScheduleCreate', description: 'Body of POST /scheduler/schedules.' });

export const SchedulePatch = z
  .strictObject({
    name: Name.optional(),
    cron: Cron.optional(),
    timezone: Timezone.optional(),
    target: ScheduleTarget.optional().describe('Replaces the target whole (a webhook given without `secret` keeps the secret).'),
    active: z.boolean().optional(),
    catch_up: z.enum(CATCH_UP_MODES).optional(),
  })
  .meta({
    id: 'SchedulePatch',
    description: 'Body of PATCH /scheduler/schedules/{id}. Giving `cron`, `timezone` or `active` computes `next_run_at` again from now.',
  });

export const SchedulePath = z.strictObject({ id: Uuid });

export const RunsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(RUNS_PAGE.max).default(RUNS_PAGE.default).describe(`1..${RUNS_PAGE.max} (default ${RUNS_PAGE.default}).`),
  cursor: z.string().min(1).max(512).optional().describe('The `next_cursor` of the previous page.'),
});

export const ScheduleOut = z
  .object({
    id: Uuid,
    name: z.string(),
    cron: z.string(),
    timezone: z.string(),
    target: z.record(z.string(), z.unknown()).describe('As given; a webhook shows `has_secret` instead of its secret.'),
    active: z.boolean(),
    catch_up: z.enum(CATCH_UP_MODES),
    next_run_at: z.string().nullable().describe('The next occurrence that will run (UTC); null while inactive.'),
    created_by: Uuid.nullable(),
    updated_by: Uuid.nullable().describe(
      'The Admin who last created or changed the schedule: every run acts as them, and is refused (the run `failed`, the schedule ' +
        'paused) once they are retired, shut out (`login_enabled: false`) or no longer an Admin.',
    ),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Schedule' });

export const ScheduleList = z.object({ items: z.array(ScheduleOut) }).meta({ id: 'ScheduleList', description: 'Oldest first.' });

export const ScheduleDeleted = z.object({ id: Uuid, deleted: z.literal(true) }).meta({ id: 'ScheduleDeleted' });

export const ScheduleRunOut = z
  .object({
    id: Uuid,
    scheduled_for: z.string().describe('The occurrence (UTC); the time it was asked for, for a run now.'),
    started_at: z.string(),
    status: z.enum(['ok', 'failed']),
    result: z
      .unknown()
      .describe('`{"job_id"}` (farm_job), `{"delivery_id"}` (webhook: queued with the notifier, which retries it), `{"name"}` (event); null when failed.'),
    error: z
      .string()
      .nullable()
      .describe('Why the run failed (a failed run is not tried again); `principal_refused: …` when the Admin it runs as may no longer run it.'),
    requested_by: Uuid.nullable().describe('The Admin who asked for a run now; null for the clock’s runs.'),
  })
  .meta({ id: 'ScheduleRun' });

export const ScheduleRunList = z
  .object({ items: z.array(ScheduleRunOut), next_cursor: z.string().nullable().describe('Opaque; null on the last page.') })
  .meta({
    id: 'ScheduleRunList',
    description: 'Newest first (by `started_at`). Runs past the newest 1,000 of a schedule, or older than 90 days, are pruned (configurable).',
  });
