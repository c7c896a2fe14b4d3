/**
 * The scheduler's rules as pure functions (docs/scheduler.md):
 * - what the API answers for a schedule, and what its `Schedule` events show to every role: a
 *   target's `kind`, `has_url`, `has_secret`, `has_payload` and `digest`, never its URL, secret or
 *   payload ("Events");
 * - whether the Admin a schedule runs as may still run it ("Who a run acts as");
 * - a run's `error` as its `ScheduleRun` event shows it (the target's URL, host, secret and farm
 *   job payload strings taken out);
 * - the limits: schedules per studio, runs kept per schedule and their age ("Limits").
 */
import { redacted, stringsOf, type ConfigDigest } from '../../kernel/domain/config.events.js';
import type { Schedule, ScheduleAuthor, StoredTarget } from './scheduler.ports.js';

/** The limits of docs/scheduler.md, "Limits" (SCHEDULER_MAX_SCHEDULES, SCHEDULER_RUNS_KEPT, SCHEDULER_RUN_RETENTION_DAYS). */
export interface SchedulerLimits {
  /** Most schedules the studio may have; one more is 409 `limit_reached`. */
  maxSchedules: number;
  /** Runs kept per schedule, newest first; older ones are pruned. */
  runsKept: number;
  /** Runs older than this many days are pruned. */
  runRetentionDays: number;
}

export const DEFAULT_SCHEDULER_LIMITS: SchedulerLimits = { maxSchedules: 1000, runsKept: 1000, runRetentionDays: 90 };

/** The schedule as the API answers it (Admins): a webhook target shows `has_secret`, never the secret. */
export function scheduleView(s: Schedule): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    cron: s.cron,
    timezone: s.timezone,
    target: s.target.kind === 'webhook' ? { ...s.target, has_secret: s.secret !== null } : { ...s.target },
    active: s.active,
    catch_up: s.catch_up,
    next_run_at: s.next_run_at,
    created_by: s.created_by,
    updated_by: s.updated_by,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

/**
 * A target as `Schedule` events show it to every role: its kind, whether it has a URL, a secret
 * or a payload, and the digest of the whole target (secret included), so a change shows as a new
 * digest. A farm job's project is the event's `project_id`.
 */
export function targetEventView(t: StoredTarget, secret: string | null, digest: ConfigDigest): Record<string, unknown> {
  const sum = digest({ target: t, secret });
  if (t.kind === 'webhook') return { kind: t.kind, has_url: true, has_secret: secret !== null, digest: sum };
  const payload = t.kind === 'farm_job' ? t.job.payload : t.payload;
  return { kind: t.kind, has_payload: payload !== undefined && payload !== null, digest: sum };
}

/** The fields of a schedule as its events show them (`target` as {@link targetEventView}). */
export function scheduleEventFields(s: Schedule, digest: ConfigDigest): Record<string, unknown> {
  return { ...scheduleView(s), target: targetEventView(s.target, s.secret, digest) };
}

/** The user a schedule's runs act as: its last editor (its creator for rows written before `updated_by`). */
export const runsAs = (s: Schedule): string | null => s.updated_by ?? s.created_by;

/**
 * Why `userId` may no longer run a schedule, or null when they may: they must be a live user
 * (not retired), still able to sign in, and an Admin.
 */
export function authorRefusal(userId: string | null, author: ScheduleAuthor | null): string | null {
  if (userId === null) return 'the schedule names no user to run as';
  if (author === null) return `the schedule runs as user ${userId}, who no longer exists or is retired`;
  if (!author.canSignIn) return `the schedule runs as user ${userId}, who may no longer sign in (login_enabled is false)`;
  if (author.role !== 'Admin') return `the schedule runs as user ${userId}, who is no longer an Admin (now ${author.role})`;
  return null;
}

/** A refused run's `error`, and the reason its schedule's pause event names. */
export function refusedRunError(reason: string): string {
  return `principal_refused: ${reason}; the schedule is paused until an Admin changes or re-activates it (the run then acts as that Admin)`;
}

/** What a run's error must not show to every role: the webhook's URL, host and secret, the farm job's payload strings. */
function hiddenOf(t: StoredTarget, secret: string | null): string[] {
  if (t.kind === 'webhook') {
    let host = '';
    try {
      host = new URL(t.url).host;
    } catch {
      host = '';
    }
    return [t.url, host, ...(secret === null ? [] : [secret])];
  }
  if (t.kind === 'farm_job') return stringsOf(t.job.payload);
  return [];
}

/** A run's `error` as its `ScheduleRun` event shows it; the runs API (Admins) answers it whole. */
export function runEventError(error: string | null, t: StoredTarget, secret: string | null): string | null {
  return error === null ? null : redacted(error, hiddenOf(t, secret));
}
