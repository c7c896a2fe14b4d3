/**
 * The schedule bodies, checked again by the service (the gateway validates them first, a farm
 * job's `job` with the very schema of `POST /farm/jobs`; records checks that job once more when a
 * run submits it). Every problem is answered at once, the cron and time zone ones at
 * `["body","cron"]` and `["body","timezone"]`.
 */
import {
  AppError,
  CATCH_UP_MODES,
  MAX_CRON_LENGTH,
  MAX_TIMEZONE_LENGTH,
  OutboundUrl,
  SCHEDULE_TEXT_CHARS,
  WebhookSecret,
  isUuid,
  type Problem,
} from '@reelbase/lib-platform';
import { z } from 'zod';
import { decodeBody, parseBody, type BodyInput } from '../../kernel/domain/bodies.js';
import { scheduleTimeProblems } from './cron.js';

const Text = z.string().min(1).max(SCHEDULE_TEXT_CHARS);

const FarmJob = z.looseObject({
  project_id: z.string().refine(isUuid, 'Input should be a valid UUID'),
  name: Text,
  kind: Text,
});

export const Target = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('farm_job'), job: FarmJob }),
  z.strictObject({ kind: z.literal('webhook'), url: OutboundUrl, secret: WebhookSecret.nullable().optional() }),
  z.strictObject({ kind: z.literal('event'), name: Text, payload: z.unknown().optional() }),
]);

export type TargetInput = z.infer<typeof Target>;

const fields = {
  name: Text,
  cron: z.string().max(MAX_CRON_LENGTH),
  timezone: z.string().max(MAX_TIMEZONE_LENGTH),
  target: Target,
  active: z.boolean(),
  catch_up: z.enum(CATCH_UP_MODES),
};

const CreateBody = z.strictObject({
  ...fields,
  timezone: fields.timezone.default('UTC'),
  active: fields.active.default(true),
  catch_up: fields.catch_up.default('skip'),
});
const PatchBody = z.strictObject({
  name: fields.name.optional(),
  cron: fields.cron.optional(),
  timezone: fields.timezone.optional(),
  target: fields.target.optional(),
  active: fields.active.optional(),
  catch_up: fields.catch_up.optional(),
});

export type ScheduleCreateInput = z.infer<typeof CreateBody>;
export type SchedulePatchInput = z.infer<typeof PatchBody>;

function parsed<S extends z.ZodType>(schema: S, input: BodyInput): z.infer<S> {
  let problems: Problem[] = [];
  let body: z.infer<S> | undefined;
  let raw: Record<string, unknown> = {};
  try {
    const v = decodeBody(input);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) raw = v as Record<string, unknown>;
    body = parseBody(schema, v as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
    problems = [...(err.problems ?? [])];
  }
  // The cron and time zone are judged whenever they are strings, with the other problems.
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const timeProblems = scheduleTimeProblems(str(raw.cron), str(raw.timezone));
  const shown = new Set(problems.map((p) => p.loc.join('\u0000')));
  for (const p of timeProblems) if (!shown.has(p.loc.join('\u0000'))) problems.push(p);
  if (problems.length || body === undefined) throw AppError.invalid(problems);
  return body;
}

export const parseCreateBody = (body: BodyInput): ScheduleCreateInput => parsed(CreateBody, body);
export const parsePatchBody = (body: BodyInput): SchedulePatchInput => parsed(PatchBody, body);
