/**
 * The schedule bodies, checked again by the service (the gateway validates them first, a farm
 * job's `job` with the very schema of `POST /farm/jobs`; records checks that job once more when a
 * run submits it). Every problem is answered at once, the cron and time zone ones at
 * `["body","cron"]` and `["body","timezone"]`.
 */
import { AppError, isUuid, type Problem } from '@reelbase/lib-platform';
import { z } from 'zod';
import { OutboundUrl, parseBody } from '../bodies.js';
import { scheduleTimeProblems } from './cron.js';

const Text = z.string().min(1).max(200);

const FarmJob = z.looseObject({
  project_id: z.string().refine(isUuid, 'Input should be a valid UUID'),
  name: Text,
  kind: Text,
});

export const Target = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('farm_job'), job: FarmJob }),
  z.strictObject({ kind: z.literal('webhook'), url: OutboundUrl, secret: z.string().min(16).max(256).nullable().optional() }),
  z.strictObject({ kind: z.literal('event'), name: Text, payload: z.unknown().optional() }),
]);

export type TargetInput = z.infer<typeof Target>;

const fields = {
  name: Text,
  cron: z.string().max(200),
  timezone: z.string().max(64),
  target: Target,
  active: z.boolean(),
  catch_up: z.enum(['skip', 'once']),
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

function parsed<S extends z.ZodType>(schema: S, json: string): z.infer<S> {
  let problems: Problem[] = [];
  let body: z.infer<S> | undefined;
  try {
    body = parseBody(schema, json);
  } catch (err) {
    if (!(err instanceof AppError) || err.kind !== 'invalid') throw err;
    problems = [...(err.problems ?? [])];
  }
  let raw: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(json);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) raw = v as Record<string, unknown>;
  } catch {
    // parseBody said so already.
  }
  // The cron and time zone are judged whenever they are strings, with the other problems.
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const timeProblems = scheduleTimeProblems(str(raw.cron), str(raw.timezone));
  const shown = new Set(problems.map((p) => p.loc.join('\u0000')));
  for (const p of timeProblems) if (!shown.has(p.loc.join('\u0000'))) problems.push(p);
  if (problems.length || body === undefined) throw AppError.invalid(problems);
  return body;
}

export const parseCreateBody = (json: string): ScheduleCreateInput => parsed(CreateBody, json);
export const parsePatchBody = (json: string): SchedulePatchInput => parsed(PatchBody, json);
