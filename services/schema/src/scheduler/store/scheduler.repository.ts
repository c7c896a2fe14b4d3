/**
 * The {@link SchedulerStore} on PostgreSQL (schema `schema`, migration schema-0004-scheduler):
 * schedules (a webhook target's secret sealed with lib-platform's SecretCipher under SECRETS_KEY,
 * bound to the schedule's id) and runs, unique per (schedule, `scheduled_for`). A due schedule is
 * taken with `FOR NO KEY UPDATE SKIP LOCKED`, so replicas ticking at once each take another one
 * (a run's foreign key takes only a key-share lock, so a run now never waits for a clock run), and
 * a run is claimed with `ON CONFLICT DO NOTHING`. Events go to the schema outbox in the same
 * transaction as the change or the run. Creates count the schedules under a transaction advisory
 * lock (`schema:schedule-cap`), so concurrent creates never pass the cap; pruning runs under a
 * tried one (`schema:schedule-run-prune`), one replica at a time, in short batches.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { SecretCipher, guarded, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import type { NewSchedule, RunCursor, RunStatus, RunTx, Schedule, ScheduleChange, ScheduleRun, SchedulerStore } from '../domain/scheduler.ports.js';
import { appendSchemaEvent } from '../../kernel/store/schema.outbox.js';

type Db = Knex | Knex.Transaction;

/** The SecretCipher context of a schedule's webhook secret. */
const secretContext = (scheduleId: string) => `schema.schedule:${scheduleId}`;

const ts = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const COLUMNS = `id, name, cron, timezone, target, secret, active, catch_up,
  ${ts('next_run_at')} as next_run_at, created_by, updated_by, ${ts('created_at')} as created_at, ${ts('updated_at')} as updated_at`;

const RUN_COLUMNS = `id, ${ts('scheduled_for')} as scheduled_for, ${ts('started_at')} as started_at, status, result, error, requested_by`;

type ScheduleRow = Omit<Schedule, 'secret'> & { secret: string | null };

export class SchedulerRepository implements SchedulerStore {
  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
    private readonly cipher: SecretCipher,
    /** Called with each event once it committed (wakes the outbox relay). */
    private readonly committed: (e: StreamEvent) => void = () => {},
  ) {}

  private async append(trx: Db, e: StreamEvent): Promise<void> {
    await appendSchemaEvent(trx as Knex, this.names, e);
  }

  private opened(r: ScheduleRow): Schedule {
    return { ...r, secret: r.secret === null ? null : this.cipher.open(r.secret, secretContext(r.id)) };
  }

  private sealed(id: string, secret: string | null): string | null {
    return secret === null ? null : this.cipher.seal(secret, secretContext(id));
  }

  private async one(db: Db, id: string, lock = ''): Promise<Schedule | undefined> {
    const res = await db.raw<{ rows: ScheduleRow[] }>(`select ${COLUMNS} from schema.schedule where id = ? ${lock}`, [id]);
    const row = res.rows[0];
    return row ? this.opened(row) : undefined;
  }

  create(s: NewSchedule, event: StreamEvent, maxSchedules: number): Promise<Schedule | undefined> {
    return guarded(async () => {
      const out = await this.db.transaction(async (trx) => {
        await trx.raw("select pg_advisory_xact_lock(hashtext('schema:schedule-cap'))");
        const count = await trx.raw<{ rows: { n: number }[] }>('select count(*)::int as n from schema.schedule');
        if ((count.rows[0]?.n ?? 0) >= maxSchedules) return undefined;
        await trx.raw(
          `insert into schema.schedule (id, name, cron, timezone, target, secret, active, catch_up, next_run_at, created_by, updated_by)
           values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?)`,
          [
            s.id,
            s.name,
            s.cron,
            s.timezone,
            JSON.stringify(s.target),
            this.sealed(s.id, s.secret),
            s.active,
            s.catch_up,
            s.next_run_at,
            s.created_by,
            s.updated_by,
          ],
        );
        await this.append(trx, event);
        return (await this.one(trx, s.id))!;
      });
      if (out) this.committed(event);
      return out;
    });
  }

  get(id: string): Promise<Schedule | undefined> {
    return guarded(() => this.one(this.db, id));
  }

  list(): Promise<Schedule[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: ScheduleRow[] }>(`select ${COLUMNS} from schema.schedule order by created_at, id`);
      return res.rows.map((r) => this.opened(r));
    });
  }

  update(id: string, change: (current: Schedule) => { change: ScheduleChange; event: StreamEvent } | null): Promise<Schedule | undefined> {
    return guarded(async () => {
      let event: StreamEvent | undefined;
      const out = await this.db.transaction(async (trx) => {
        const cur = await this.one(trx, id, 'for no key update');
        if (!cur) return undefined;
        const made = change(cur);
        if (!made) return cur;
        const c = made.change;
        const sets: string[] = [];
        const values: Knex.RawBinding[] = [];
        const set = (col: string, v: Knex.RawBinding, cast = '') => {
          sets.push(`${col} = ?${cast}`);
          values.push(v);
        };
        if (c.name !== undefined) set('name', c.name);
        if (c.cron !== undefined) set('cron', c.cron);
        if (c.timezone !== undefined) set('timezone', c.timezone);
        if (c.target !== undefined) set('target', JSON.stringify(c.target), '::jsonb');
        if (c.secret !== undefined) set('secret', this.sealed(id, c.secret));
        if (c.active !== undefined) set('active', c.active);
        if (c.catch_up !== undefined) set('catch_up', c.catch_up);
        if (c.next_run_at !== undefined) set('next_run_at', c.next_run_at);
        if (c.updated_by !== undefined) set('updated_by', c.updated_by);
        await trx.raw(`update schema.schedule set ${sets.join(', ')}, updated_at = now() where id = ?`, [...values, id]);
        await this.append(trx, made.event);
        event = made.event;
        return this.one(trx, id);
      });
      if (event) this.committed(event);
      return out;
    });
  }

  delete(id: string, event: (s: Schedule) => StreamEvent): Promise<boolean> {
    return guarded(async () => {
      const e = await this.db.transaction(async (trx) => {
        const cur = await this.one(trx, id, 'for update');
        if (!cur) return undefined;
        await trx.raw('delete from schema.schedule where id = ?', [id]);
        const made = event(cur);
        await this.append(trx, made);
        return made;
      });
      if (e) this.committed(e);
      return e !== undefined;
    });
  }

  private runTx(trx: Knex.Transaction, schedule: Schedule, events: StreamEvent[]): RunTx {
    return {
      schedule,
      claim: async (run) => {
        const res = await trx.raw<{ rowCount: number }>(
          `insert into schema.schedule_run (id, schedule_id, scheduled_for, started_at, status, requested_by)
           values (?, ?, ?, ?, 'ok', ?) on conflict (schedule_id, scheduled_for) do nothing`,
          [run.id, schedule.id, run.scheduledFor, run.startedAt, run.requestedBy],
        );
        return res.rowCount === 1;
      },
      finish: async (id: string, status: RunStatus, result: unknown, error: string | null) => {
        await trx.raw('update schema.schedule_run set status = ?, result = ?::jsonb, error = ? where id = ?', [
          status,
          result === undefined ? null : JSON.stringify(result),
          error,
          id,
        ]);
      },
      setNextRunAt: async (at) => {
        await trx.raw('update schema.schedule set next_run_at = ? where id = ?', [at, schedule.id]);
      },
      append: async (e) => {
        await this.append(trx, e);
        events.push(e);
      },
      pause: async (e) => {
        // `and active`: a second pause waits for the first one's commit, then finds nothing to stop.
        const res = await trx.raw<{ rowCount: number }>(
          'update schema.schedule set active = false, next_run_at = null, updated_at = now() where id = ? and active',
          [schedule.id],
        );
        if (res.rowCount === 0) return false;
        await this.append(trx, e);
        events.push(e);
        return true;
      },
    };
  }

  private async inRun(find: (trx: Knex.Transaction) => Promise<Schedule | undefined>, fn: (tx: RunTx) => Promise<void>): Promise<boolean> {
    const events: StreamEvent[] = [];
    const found = await this.db.transaction(async (trx) => {
      const schedule = await find(trx);
      if (!schedule) return false;
      await fn(this.runTx(trx, schedule, events));
      return true;
    });
    for (const e of events) this.committed(e);
    return found;
  }

  withDue(now: string, fn: (tx: RunTx) => Promise<void>): Promise<boolean> {
    return guarded(() =>
      this.inRun(async (trx) => {
        const res = await trx.raw<{ rows: ScheduleRow[] }>(
          `select ${COLUMNS} from schema.schedule
            where active and next_run_at <= ?
            order by next_run_at limit 1
            for no key update skip locked`,
          [now],
        );
        const row = res.rows[0];
        return row ? this.opened(row) : undefined;
      }, fn),
    );
  }

  withSchedule(id: string, fn: (tx: RunTx) => Promise<void>): Promise<boolean> {
    return guarded(() => this.inRun((trx) => this.one(trx, id, 'for key share'), fn));
  }

  runs(scheduleId: string, limit: number, cursor: RunCursor | null): Promise<ScheduleRun[] | undefined> {
    return guarded(async () => {
      if (!(await this.one(this.db, scheduleId))) return undefined;
      const after = cursor ? 'and (started_at, id) < (?::timestamptz, ?::uuid)' : '';
      const res = await this.db.raw<{ rows: ScheduleRun[] }>(
        `select ${RUN_COLUMNS}
           from schema.schedule_run
          where schedule_id = ? ${after}
          order by started_at desc, id desc
          limit ?`,
        [scheduleId, ...(cursor ? [cursor.startedAt, cursor.id] : []), limit],
      );
      return res.rows;
    });
  }

  pruneRuns(keep: number, before: string, batch: number): Promise<number> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        const lock = await trx.raw<{ rows: { ok: boolean }[] }>("select pg_try_advisory_xact_lock(hashtext('schema:schedule-run-prune')) as ok");
        if (!lock.rows[0]?.ok) return 0;
        // The newest `keep` of each schedule are found on its listing index; the old ones on started_at.
        const res = await trx.raw<{ rowCount: number }>(
          `delete from schema.schedule_run where id in (
             select id from (
               (select r.id from schema.schedule s
                  cross join lateral (select x.id from schema.schedule_run x where x.schedule_id = s.id
                                       order by x.started_at desc, x.id desc offset ?) r
                 limit ?)
               union
               (select id from schema.schedule_run where started_at < ? limit ?)
             ) old limit ?)`,
          [keep, batch, before, batch, batch],
        );
        return res.rowCount;
      }),
    );
  }
}
