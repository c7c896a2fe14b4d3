/**
 * The scheduler's REST JSON (docs/api-notes.md, "Scheduler") ↔ its typed protobuf messages
 * (`reelbase.schema.v1.SchedulerService`, scheduler.proto), both ways, written once for the
 * gateway (requests out, answers in) and the schema service (requests in, answers out).
 */
import type { schedulerv1 } from '@reelbase/proto';
import { int, isJsonObject, objectAt, orNull, put, str, strings, type JsonObject } from './json.values.js';

/** Whether a target is read from a request body (a webhook's `secret`) or shown in an answer (`has_secret`). */
export type TargetSide = 'request' | 'answer';

export function farmJobToProto(job: JsonObject): schedulerv1.ScheduleFarmJob {
  return {
    projectId: str(job.project_id) ?? '',
    name: str(job.name) ?? '',
    kind: str(job.kind) ?? '',
    pool: str(job.pool),
    priority: int(job.priority),
    frames: str(job.frames),
    chunkSize: int(job.chunk_size),
    payload: isJsonObject(job.payload) ? job.payload : undefined,
    versionId: str(job.version_id),
    taskId: str(job.task_id),
    maxAttempts: int(job.max_attempts),
    dependsOn: strings(job.depends_on),
    manager: str(job.manager),
    externalId: str(job.external_id),
  };
}

export function farmJobFromProto(j: schedulerv1.ScheduleFarmJob): JsonObject {
  const out: JsonObject = { project_id: j.projectId, name: j.name, kind: j.kind };
  put(out, 'pool', j.pool);
  put(out, 'priority', j.priority);
  put(out, 'frames', j.frames);
  put(out, 'chunk_size', j.chunkSize);
  put(out, 'payload', j.payload);
  put(out, 'version_id', j.versionId);
  put(out, 'task_id', j.taskId);
  put(out, 'max_attempts', j.maxAttempts);
  out.depends_on = [...j.dependsOn];
  put(out, 'manager', j.manager);
  return put(out, 'external_id', j.externalId);
}

export function targetToProto(t: JsonObject, side: TargetSide): schedulerv1.ScheduleTarget {
  if (t.kind === 'farm_job') return { kind: { $case: 'farmJob', value: farmJobToProto(objectAt(t.job)) } };
  if (t.kind === 'webhook') {
    const secret = t.secret;
    return {
      kind: {
        $case: 'webhook',
        value: {
          url: str(t.url) ?? '',
          secretChange:
            side === 'answer' || secret === undefined
              ? undefined
              : secret === null
                ? { $case: 'noSecret', value: true }
                : { $case: 'secret', value: str(secret) ?? '' },
          hasSecret: side === 'answer' && t.has_secret === true,
        },
      },
    };
  }
  return { kind: { $case: 'event', value: { name: str(t.name) ?? '', payload: t.payload } } };
}

export function targetFromProto(t: schedulerv1.ScheduleTarget | undefined, side: TargetSide): JsonObject {
  const k = t?.kind;
  if (!k) return {};
  if (k.$case === 'farmJob') return { kind: 'farm_job', job: farmJobFromProto(k.value) };
  if (k.$case === 'event') return put({ kind: 'event', name: k.value.name }, 'payload', k.value.payload);
  const out: JsonObject = { kind: 'webhook', url: k.value.url };
  if (side === 'answer') out.has_secret = k.value.hasSecret;
  else if (k.value.secretChange) out.secret = k.value.secretChange.$case === 'secret' ? k.value.secretChange.value : null;
  return out;
}

/** A create or patch body (only the fields it has). */
export function scheduleBodyToProto(b: JsonObject): schedulerv1.ScheduleBody {
  return {
    name: str(b.name),
    cron: str(b.cron),
    timezone: str(b.timezone),
    target: isJsonObject(b.target) ? targetToProto(b.target, 'request') : undefined,
    active: typeof b.active === 'boolean' ? b.active : undefined,
    catchUp: str(b.catch_up),
  };
}

export function scheduleBodyFromProto(b: schedulerv1.ScheduleBody): JsonObject {
  const out: JsonObject = {};
  put(out, 'name', b.name);
  put(out, 'cron', b.cron);
  put(out, 'timezone', b.timezone);
  if (b.target) out.target = targetFromProto(b.target, 'request');
  put(out, 'active', b.active);
  return put(out, 'catch_up', b.catchUp);
}

/** A schedule as the API answers it. */
export function scheduleToProto(s: JsonObject): schedulerv1.Schedule {
  return {
    id: str(s.id) ?? '',
    name: str(s.name) ?? '',
    cron: str(s.cron) ?? '',
    timezone: str(s.timezone) ?? '',
    target: targetToProto(objectAt(s.target), 'answer'),
    active: s.active === true,
    catchUp: str(s.catch_up) ?? '',
    nextRunAt: str(s.next_run_at),
    createdBy: str(s.created_by),
    updatedBy: str(s.updated_by),
    createdAt: str(s.created_at) ?? '',
    updatedAt: str(s.updated_at) ?? '',
  };
}

export function scheduleFromProto(s: schedulerv1.Schedule): JsonObject {
  return {
    id: s.id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    target: targetFromProto(s.target, 'answer'),
    active: s.active,
    catch_up: s.catchUp,
    next_run_at: orNull(s.nextRunAt),
    created_by: orNull(s.createdBy),
    updated_by: orNull(s.updatedBy),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

function resultToProto(r: unknown): schedulerv1.ScheduleRunResult | undefined {
  if (!isJsonObject(r)) return undefined;
  if (typeof r.job_id === 'string') return { outcome: { $case: 'jobId', value: r.job_id } };
  if (typeof r.delivery_id === 'string') return { outcome: { $case: 'deliveryId', value: r.delivery_id } };
  if (typeof r.name === 'string') return { outcome: { $case: 'name', value: r.name } };
  return undefined;
}

function resultFromProto(r: schedulerv1.ScheduleRunResult | undefined): JsonObject | null {
  const o = r?.outcome;
  if (!o) return null;
  if (o.$case === 'jobId') return { job_id: o.value };
  if (o.$case === 'deliveryId') return { delivery_id: o.value };
  return { name: o.value };
}

/** A run as the API answers it. */
export function runToProto(r: JsonObject): schedulerv1.ScheduleRun {
  return {
    id: str(r.id) ?? '',
    scheduledFor: str(r.scheduled_for) ?? '',
    startedAt: str(r.started_at) ?? '',
    status: str(r.status) ?? '',
    result: resultToProto(r.result),
    error: str(r.error),
    requestedBy: str(r.requested_by),
  };
}

export function runFromProto(r: schedulerv1.ScheduleRun): JsonObject {
  return {
    id: r.id,
    scheduled_for: r.scheduledFor,
    started_at: r.startedAt,
    status: r.status,
    result: resultFromProto(r.result),
    error: orNull(r.error),
    requested_by: orNull(r.requestedBy),
  };
}
