/**
 * What the scheduler needs from outside (docs/architecture.md, "Scheduler"), re-exported by
 * domain/ports.ts: its store (schedules, runs and the outbox, store/scheduler.repository.ts),
 * records' farm (records/scheduler.farm.ts), the users a schedule runs as (records' User
 * records, records/scheduler.principals.ts) and the notifier, which delivers webhook targets
 * (notifier/schedule.deliveries.ts).
 */
import type { CallContext, StreamEvent } from '@reelbase/lib-platform';

export type CatchUp = 'skip' | 'once';

/** A target as stored (a webhook's secret apart, sealed in its own column). */
export type StoredTarget =
  { kind: 'farm_job'; job: Record<string, unknown> } | { kind: 'webhook'; url: string } | { kind: 'event'; name: string; payload: unknown };

/** A schedule as stored. Times are ISO 8601 UTC strings. */
export interface Schedule {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  target: StoredTarget;
  /** The webhook target's secret in clear (sealed at rest); null without one. */
  secret: string | null;
  active: boolean;
  catch_up: CatchUp;
  /** The next occurrence to run; null while inactive (or when the expression has no more). */
  next_run_at: string | null;
  created_by: string | null;
  /** The Admin who last created or changed it: each run acts as them (docs/scheduler.md, "Who a run acts as"). */
  updated_by: string | null;
  created_at: string;
  updated_at: string;
}

export type NewSchedule = Omit<Schedule, 'created_at' | 'updated_at'>;

/** The fields a change writes (the rest stay). */
export type ScheduleChange = Partial<Pick<Schedule, 'name' | 'cron' | 'timezone' | 'target' | 'secret' | 'active' | 'catch_up' | 'next_run_at' | 'updated_by'>>;

export type RunStatus = 'ok' | 'failed';

/** One run, as listed. */
export interface ScheduleRun {
  id: string;
  scheduled_for: string;
  started_at: string;
  status: RunStatus;
  result: unknown;
  error: string | null;
  /** The Admin who asked for a run now; null for the clock's runs. */
  requested_by: string | null;
}

/** A run's place in the list (newest first): the cursor of the next page. */
export interface RunCursor {
  startedAt: string;
  id: string;
}

/** The run being made inside one transaction (the schedule's row locked for a clock run). */
export interface RunTx {
  /** The schedule as it is now (secret opened). */
  schedule: Schedule;
  /** Claims the occurrence: false when a run of the same schedule and `scheduled_for` exists (another replica made it). */
  claim(run: { id: string; scheduledFor: string; startedAt: string; requestedBy: string | null }): Promise<boolean>;
  /** Records how the claimed run ended. */
  finish(id: string, status: RunStatus, result: unknown, error: string | null): Promise<void>;
  /** Moves the schedule's next occurrence. */
  setNextRunAt(at: string | null): Promise<void>;
  /** Appends an event to the schema outbox, committed with the run. */
  append(event: StreamEvent): Promise<void>;
  /**
   * Stops the schedule (`active` false, `next_run_at` null) with its event, unless it is stopped
   * already: false then, and no event (so two runs refused at once pause it once).
   */
  pause(event: StreamEvent): Promise<boolean>;
}

export interface SchedulerStore {
  /**
   * Writes the schedule with its event unless `maxSchedules` exist already (counted under a lock,
   * so concurrent creates never pass the cap): undefined then, and nothing written.
   */
  create(s: NewSchedule, event: StreamEvent, maxSchedules: number): Promise<Schedule | undefined>;
  get(id: string): Promise<Schedule | undefined>;
  /** Every schedule, oldest first. */
  list(): Promise<Schedule[]>;
  /**
   * Runs `change` on the schedule with its row locked; when it returns a change, writes it and
   * its event in one transaction. Undefined when there is no such schedule.
   */
  update(id: string, change: (current: Schedule) => { change: ScheduleChange; event: StreamEvent } | null): Promise<Schedule | undefined>;
  /** Deletes the schedule and its runs with the event; false when there was none. */
  delete(id: string, event: (s: Schedule) => StreamEvent): Promise<boolean>;
  /**
   * Locks one active schedule whose `next_run_at` is at or before `now` that no other transaction
   * holds (`FOR NO KEY UPDATE SKIP LOCKED`) and runs `fn` in that transaction; false when none is due.
   */
  withDue(now: string, fn: (tx: RunTx) => Promise<void>): Promise<boolean>;
  /** Runs `fn` in one transaction on the schedule (not locked against clock runs); false when there is none. */
  withSchedule(id: string, fn: (tx: RunTx) => Promise<void>): Promise<boolean>;
  /** Runs of a schedule newest first (by `started_at`, then id), after `cursor`; undefined when the schedule does not exist. */
  runs(scheduleId: string, limit: number, cursor: RunCursor | null): Promise<ScheduleRun[] | undefined>;
  /**
   * Deletes up to `batch` runs that are not among the newest `keep` of their schedule or started
   * before `before` (ISO 8601); how many it deleted (fewer than `batch`: nothing more to delete).
   * One replica prunes at a time; another one's call deletes nothing meanwhile and answers 0.
   */
  pruneRuns(keep: number, before: string, batch: number): Promise<number>;
}

/** What the users directory says of the user a schedule runs as (docs/scheduler.md, "Who a run acts as"). */
export interface ScheduleAuthor {
  role: string;
  /** False once their login is switched off (`login_enabled: false`). */
  canSignIn: boolean;
}

export interface ScheduleAuthorsPort {
  /** The live user with this id; null when there is none (never was, or retired). */
  find(userId: string): Promise<ScheduleAuthor | null>;
}

/** A farm job to submit (the body of POST /farm/jobs, as validated). */
export interface FarmJobPort {
  /** Creates the job as `ctx`; its id. */
  createJob(job: Record<string, unknown>, ctx: CallContext): Promise<string>;
}

/** A webhook target's delivery (the notifier sends it like a webhook delivery). */
export interface ScheduleDelivery {
  deliveryId: string;
  scheduleId: string;
  url: string;
  secret: string | null;
  body: string;
}

export interface ScheduleDeliveriesPort {
  /** Queues the delivery (once per id) and returns at once; its id. */
  enqueue(d: ScheduleDelivery, ctx: CallContext): Promise<string>;
}

/** The time, so tests can move it. */
export interface Clock {
  now(): Date;
}
