/**
 * The scheduler's use cases (docs/scheduler.md): schedules (Admin only), run now, the runs
 * listed newest first, and the clock's work: {@link SchedulerService.runDue} makes the run of one
 * due occurrence. Exactly once per occurrence, whatever the number of replicas: a run is a row
 * unique per (schedule, `scheduled_for`), claimed in the transaction that holds the schedule's
 * row (`FOR NO KEY UPDATE SKIP LOCKED`), advances `next_run_at` and commits the run's
 * `ScheduleRun` event with it; no leader is elected.
 *
 * Missed occurrences (nothing ran when they were due): among the occurrences from `next_run_at`
 * to now, the latest is run when it is at most {@link MISSED_AFTER_MS} late; with `catch_up:
 * "once"` it is run however late; every other one is skipped. Either way `next_run_at` moves to
 * the first occurrence after now.
 *
 * A run acts as the schedule's last editor (`updated_by`), checked at every run, the clock's and a
 * run now: a user who is gone, retired, shut out or no longer an Admin makes the run fail and
 * pauses the schedule (rules in scheduler.rules.ts). `Schedule` events never show a target's URL,
 * secret or payload, nor `ScheduleRun` events a webhook's URL (docs/api-notes.md, "Events").
 */
import { AppError, RUNS_PAGE, newId, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import type { BodyInput } from '../../kernel/domain/bodies.js';
import type { ConfigDigest } from '../../kernel/domain/config.events.js';
import { CronSchedule } from './cron.js';
import { parseCreateBody, parsePatchBody, type TargetInput } from './scheduler.body.js';
import type {
  Clock,
  FarmJobPort,
  RunCursor,
  RunStatus,
  RunTx,
  Schedule,
  ScheduleAuthorsPort,
  ScheduleChange,
  ScheduleDeliveriesPort,
  ScheduleRun,
  SchedulerStore,
  StoredTarget,
} from './scheduler.ports.js';
import {
  DEFAULT_SCHEDULER_LIMITS,
  authorRefusal,
  refusedRunError,
  runEventError,
  runsAs,
  scheduleEventFields,
  scheduleView,
  type SchedulerLimits,
} from './scheduler.rules.js';

/** An occurrence later than this when the scheduler first sees it counts as missed. */
export const MISSED_AFTER_MS = 60_000;

/** The name the schema service calls other services under for the scheduler. */
export const SCHEDULER_VIA = 'schema';

/** Runs deleted per statement when pruning. */
export const PRUNE_BATCH = 5000;

export interface SchedulerServiceDeps {
  store: SchedulerStore;
  farm: FarmJobPort;
  deliveries: ScheduleDeliveriesPort;
  /** Who a schedule runs as, as the users directory says now. */
  authors: ScheduleAuthorsPort;
  /** The digest `Schedule` events show instead of a target (config.events.ts). */
  digest: ConfigDigest;
  limits?: Partial<SchedulerLimits>;
  clock?: Clock;
}

const iso = (d: Date) => d.toISOString();

function adminOf(ctx: CallContext): string {
  const p = ctx.principal;
  if (!p) throw new AppError('unauthenticated', 'no principal on the call');
  if ((p.authKind !== 'token' && p.authKind !== 'api_key') || !p.userId || p.role !== 'Admin') {
    throw new AppError('forbidden', 'the scheduler is for Admins');
  }
  return p.userId.toLowerCase();
}

function idOf(raw: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) throw AppError.notFound(`schedule ${raw} does not exist`);
  return raw.toLowerCase();
}

/** A target as stored, and the secret it leaves (absent: the webhook keeps `previous`). */
function storedTarget(t: TargetInput, previous: string | null): { target: StoredTarget; secret: string | null } {
  if (t.kind === 'farm_job') return { target: { kind: 'farm_job', job: t.job }, secret: null };
  if (t.kind === 'event') return { target: { kind: 'event', name: t.name, payload: t.payload ?? null }, secret: null };
  return { target: { kind: 'webhook', url: t.url }, secret: t.secret === undefined ? previous : t.secret };
}

/** The project a schedule's events belong to: its farm job's. */
const projectOf = (t: StoredTarget): string | null => (t.kind === 'farm_job' && typeof t.job.project_id === 'string' ? t.job.project_id.toLowerCase() : null);

/** A cursor as sent: base64url of `started_at|id`. */
export function encodeCursor(c: RunCursor): string {
  return Buffer.from(`${c.startedAt}|${c.id}`, 'utf8').toString('base64url');
}

function decodeCursor(raw: string): RunCursor {
  const [startedAt, id, extra] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  if (extra !== undefined || !startedAt || !id || Number.isNaN(Date.parse(startedAt)) || !/^[0-9a-f-]{36}$/.test(id)) {
    throw AppError.invalid([{ loc: ['query', 'cursor'], msg: 'a next_cursor from an earlier page', type: 'value_error' }]);
  }
  return { startedAt, id };
}

export class SchedulerService {
  private readonly clock: Clock;
  private readonly limits: SchedulerLimits;

  constructor(private readonly deps: SchedulerServiceDeps) {
    this.clock = deps.clock ?? { now: () => new Date() };
    this.limits = { ...DEFAULT_SCHEDULER_LIMITS, ...deps.limits };
  }

  private event(
    entityType: 'Schedule' | 'ScheduleRun',
    id: string,
    action: StreamEvent['action'],
    actor: string | null,
    projectId: string | null,
    changes: Record<string, unknown>,
  ): StreamEvent {
    return { event_id: newId(), entity_type: entityType, entity_id: id, project_id: projectId, action, actor, changes, occurred_at: iso(this.clock.now()) };
  }

  /** The next occurrence after now of an active schedule; null when inactive. */
  private nextRunAt(cron: string, timezone: string, active: boolean): string | null {
    if (!active) return null;
    const next = CronSchedule.of(cron, timezone).next(this.clock.now());
    return next ? iso(next) : null;
  }

  async create(input: BodyInput, ctx: CallContext): Promise<Record<string, unknown>> {
    const actor = adminOf(ctx);
    const body = parseCreateBody(input);
    const { target, secret } = storedTarget(body.target, null);
    const cron = body.cron.trim().split(/\s+/).join(' ');
    const s = {
      id: newId(),
      name: body.name,
      cron,
      timezone: body.timezone,
      target,
      secret,
      active: body.active,
      catch_up: body.catch_up,
      next_run_at: this.nextRunAt(cron, body.timezone, body.active),
      created_by: actor,
      updated_by: actor,
    };
    const fields = scheduleEventFields({ ...s, created_at: '', updated_at: '' }, this.deps.digest);
    const { created_at: _c, updated_at: _u, id: _i, created_by: _b, updated_by: _e, ...changes } = fields;
    const max = this.limits.maxSchedules;
    const stored = await this.deps.store.create(s, this.event('Schedule', s.id, 'create', actor, projectOf(target), changes), max);
    if (!stored) {
      throw AppError.conflict('limit_reached', `the studio has ${max} schedules, the most it may have; delete one before creating another`, { limit: max });
    }
    return scheduleView(stored);
  }

  async list(ctx: CallContext): Promise<{ items: Record<string, unknown>[] }> {
    adminOf(ctx);
    return { items: (await this.deps.store.list()).map(scheduleView) };
  }

  async get(rawId: string, ctx: CallContext): Promise<Record<string, unknown>> {
    adminOf(ctx);
    const s = await this.deps.store.get(idOf(rawId));
    if (!s) throw AppError.notFound(`schedule ${rawId} does not exist`);
    return scheduleView(s);
  }

  /**
   * Changes the fields given. `next_run_at` is computed again from now when `cron`, `timezone` or
   * `active` is given (occurrences missed while inactive are not run); a target replaces the old
   * one whole, except that a webhook given without `secret` keeps the secret the schedule had.
   * A change that changes nothing writes nothing; one that changes something makes the caller the
   * schedule's `updated_by`, the Admin its runs act as from then on.
   */
  async update(rawId: string, input: BodyInput, ctx: CallContext): Promise<Record<string, unknown>> {
    const actor = adminOf(ctx);
    const body = parsePatchBody(input);
    const id = idOf(rawId);
    const out = await this.deps.store.update(id, (cur) => {
      const change: ScheduleChange = {};
      if (body.name !== undefined && body.name !== cur.name) change.name = body.name;
      const cron = body.cron === undefined ? undefined : body.cron.trim().split(/\s+/).join(' ');
      if (cron !== undefined && cron !== cur.cron) change.cron = cron;
      if (body.timezone !== undefined && body.timezone !== cur.timezone) change.timezone = body.timezone;
      if (body.active !== undefined && body.active !== cur.active) change.active = body.active;
      if (body.catch_up !== undefined && body.catch_up !== cur.catch_up) change.catch_up = body.catch_up;
      if (body.target !== undefined) {
        const { target, secret } = storedTarget(body.target, cur.target.kind === 'webhook' ? cur.secret : null);
        if (JSON.stringify(target) !== JSON.stringify(cur.target)) change.target = target;
        if (secret !== cur.secret) change.secret = secret;
      }
      if (cron !== undefined || body.timezone !== undefined || body.active !== undefined) {
        const next = this.nextRunAt(change.cron ?? cur.cron, change.timezone ?? cur.timezone, change.active ?? cur.active);
        if (next !== cur.next_run_at) change.next_run_at = next;
      }
      if (Object.keys(change).length === 0) return null;
      if (cur.updated_by !== actor) change.updated_by = actor;
      const after: Schedule = { ...cur, ...change };
      const fields = scheduleEventFields(after, this.deps.digest);
      const changes: Record<string, unknown> = {};
      for (const key of Object.keys(change)) {
        if (key === 'secret') changes.target = fields.target;
        else changes[key] = fields[key];
      }
      return { change, event: this.event('Schedule', id, 'update', actor, projectOf(after.target), changes) };
    });
    if (!out) throw AppError.notFound(`schedule ${rawId} does not exist`);
    return scheduleView(out);
  }

  async delete(rawId: string, ctx: CallContext): Promise<{ id: string; deleted: true }> {
    const actor = adminOf(ctx);
    const id = idOf(rawId);
    const done = await this.deps.store.delete(id, (s) => this.event('Schedule', id, 'delete', actor, projectOf(s.target), {}));
    if (!done) throw AppError.notFound(`schedule ${rawId} does not exist`);
    return { id, deleted: true };
  }

  /**
   * Runs the schedule's target now, once, whether the schedule is active or not (`next_run_at`
   * stays), exactly as the clock would: as its `updated_by`, checked first; the caller is the
   * run's `requested_by`. Answers the run.
   */
  async runNow(rawId: string, ctx: CallContext): Promise<ScheduleRun> {
    const caller = adminOf(ctx);
    const id = idOf(rawId);
    let run: ScheduleRun | undefined;
    // Two runs of one schedule claimed in the same millisecond: the later one takes the next.
    for (let attempt = 0; attempt < 5 && !run; attempt += 1) {
      const found = await this.deps.store.withSchedule(id, async (tx) => {
        const now = new Date(this.clock.now().getTime() + attempt);
        run = await this.execute(tx, now, now, caller, ctx.requestId);
      });
      if (!found) throw AppError.notFound(`schedule ${rawId} does not exist`);
    }
    if (!run) throw new AppError('conflict', 'the run could not be claimed; try again');
    return run;
  }

  async runs(rawId: string, query: { limit?: number; cursor?: string }, ctx: CallContext): Promise<{ items: ScheduleRun[]; next_cursor: string | null }> {
    adminOf(ctx);
    const limit = query.limit ?? RUNS_PAGE.default;
    if (!Number.isInteger(limit) || limit < 1 || limit > RUNS_PAGE.max) {
      throw AppError.invalid([{ loc: ['query', 'limit'], msg: `Input should be 1 to ${RUNS_PAGE.max}`, type: 'value_error' }]);
    }
    const cursor = query.cursor ? decodeCursor(query.cursor) : null;
    const id = idOf(rawId);
    const rows = await this.deps.store.runs(id, limit + 1, cursor);
    if (!rows) throw AppError.notFound(`schedule ${rawId} does not exist`);
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return { items, next_cursor: rows.length > limit && last ? encodeCursor({ startedAt: last.started_at, id: last.id }) : null };
  }

  /**
   * The clock's work: makes the run of one due schedule's occurrence (when it is not missed) and
   * moves its `next_run_at`; false when nothing is due.
   */
  runDue(): Promise<boolean> {
    const now = this.clock.now();
    return this.deps.store.withDue(iso(now), async (tx) => {
      const s = tx.schedule;
      const cron = CronSchedule.of(s.cron, s.timezone);
      const from = new Date(s.next_run_at!);
      const latest = cron.latest(now, from);
      const next = cron.next(now);
      await tx.setNextRunAt(next ? iso(next) : null);
      if (!latest) return;
      const late = now.getTime() - latest.getTime();
      if (late > MISSED_AFTER_MS && s.catch_up === 'skip') return;
      await this.execute(tx, latest, now, null, newId());
    });
  }

  /**
   * The clock's housekeeping: deletes the runs past the newest `runsKept` of each schedule and
   * those older than `runRetentionDays`, in batches; how many it deleted.
   */
  async prune(): Promise<number> {
    const before = iso(new Date(this.clock.now().getTime() - this.limits.runRetentionDays * 86_400_000));
    let total = 0;
    for (;;) {
      const n = await this.deps.store.pruneRuns(this.limits.runsKept, before, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }

  /**
   * Why the run may not act as `userId` (its `error`, and the reason its schedule is paused), or
   * null when it may. A directory that cannot be asked fails the run without pausing the schedule.
   */
  private async refusal(userId: string | null): Promise<{ error: string; pause: string | null } | null> {
    try {
      const reason = authorRefusal(userId, userId === null ? null : await this.deps.authors.find(userId));
      return reason === null ? null : { error: refusedRunError(reason), pause: reason };
    } catch (err) {
      return { error: `could not check whether user ${userId} may still run the schedule: ${errorText(err)}`, pause: null };
    }
  }

  /**
   * Claims the run of `scheduledFor`, checks who it acts as, runs the target (or, refused, pauses
   * the schedule), records the run and its events; undefined when another made it.
   */
  private async execute(tx: RunTx, scheduledFor: Date, now: Date, requestedBy: string | null, requestId: string): Promise<ScheduleRun | undefined> {
    const s = tx.schedule;
    const id = newId();
    const run = { id, scheduledFor: iso(scheduledFor), startedAt: iso(now), requestedBy };
    if (!(await tx.claim(run))) return undefined;
    // The run acts as the schedule's last editor: a farm job is theirs, the run's event names them.
    const actor = runsAs(s);
    const ctx: CallContext = { requestId, principal: { userId: actor ?? '', role: 'Service', authKind: 'service', via: SCHEDULER_VIA } };
    let status: RunStatus = 'ok';
    let result: unknown = null;
    let error: string | null = null;
    const extra: Record<string, unknown> = {};
    const refused = await this.refusal(actor);
    try {
      const t = s.target;
      if (refused) {
        status = 'failed';
        error = refused.error;
      } else if (t.kind === 'farm_job') {
        result = { job_id: await this.deps.farm.createJob(t.job, ctx) };
      } else if (t.kind === 'webhook') {
        const body = JSON.stringify({ schedule_id: s.id, run_id: id, scheduled_for: run.scheduledFor });
        result = { delivery_id: await this.deps.deliveries.enqueue({ deliveryId: id, scheduleId: s.id, url: t.url, secret: s.secret, body }, ctx) };
      } else {
        result = { name: t.name };
        extra.name = t.name;
        extra.payload = t.payload;
      }
    } catch (err) {
      status = 'failed';
      error = errorText(err);
    }
    await tx.finish(id, status, result, error);
    await tx.append(
      this.event('ScheduleRun', id, 'create', actor, projectOf(s.target), {
        schedule_id: s.id,
        kind: s.target.kind,
        scheduled_for: run.scheduledFor,
        started_at: run.startedAt,
        requested_by: requestedBy,
        status,
        result,
        error: runEventError(error, s.target, s.secret),
        ...extra,
      }),
    );
    if (refused?.pause) {
      // The scheduler's own act (no actor): the schedule stops until an Admin changes it.
      await tx.pause(this.event('Schedule', s.id, 'update', null, projectOf(s.target), { active: false, next_run_at: null, reason: refused.pause }));
    }
    return { id, scheduled_for: run.scheduledFor, started_at: run.startedAt, status, result, error, requested_by: requestedBy };
  }
}

/** Why a target failed, in one line (a 422 of records names each problem). */
function errorText(err: unknown): string {
  if (err instanceof AppError) {
    const problems = err.problems?.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; ');
    return `${err.code}: ${problems || err.message}`.slice(0, 2000);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}
