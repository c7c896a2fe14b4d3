/**
 * The farm's statements (docs/farm.md) on records' database, on the farm's pool (openFarmPool): the
 * claim, heartbeat, complete, fail and expiry are each ONE statement (CTEs) that changes the
 * chunk, the FarmJob record (status, counters), its outbox event, the job's farm row and the
 * copies of its offerability on its chunks together. Every value is bound ($n); every public
 * method runs inside `guarded`; a deadlock between two job-level changes (PostgreSQL aborts one
 * of them, SQLSTATE 40P01) is retried.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { AppError, guarded, newId, openSqlPool, queryPrepared, queryText, sqlIsoMicros, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import type { Db } from '../../kernel/store/knex.db.js';
import type { OutboxEvent, StoredRecord } from '../../kernel/domain/record.ports.js';
import { recordsOutbox, stampedPayload } from '../../kernel/store/outbox.repository.js';
import { toStored, type Row } from '../../kernel/store/record.repository.js';
import { readableSql } from '../../kernel/store/project.readers.sql.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import {
  andJobReadable,
  chunkJson,
  claimStatement,
  jobChange,
  NEXT_UPDATED_AT,
  Params,
  recordJson,
  toChunk,
  type ChunkJson,
  type LeaseRow,
} from './farm.statements.js';
import type {
  FarmChunkPage,
  FarmChunkRow,
  FarmClaimInput,
  FarmClaimOutcome,
  FarmEventStamp,
  FarmJobChange,
  FarmJobRefusal,
  FarmJobState,
  FarmLease,
  FarmLeaseOutcome,
  FarmStore,
  NewFarmJob,
} from '../domain/farm.ports.js';

/**
 * Opens the farm's pool (docs/farm.md): its own connections, so a burst of agents never takes the
 * connections record writes use. The farm's statements are long CTEs whose planning costs more than
 * their execution: they are prepared once per connection (lib-platform's `queryPrepared`) and run
 * with their generic plan.
 */
export function openFarmPool(o: { databaseUrl: string; max: number }): Knex {
  return openSqlPool({
    name: 'farm',
    application: 'records',
    databaseUrl: o.databaseUrl,
    max: o.max,
    statementTimeoutMs: 10_000,
    settings: { plan_cache_mode: 'force_generic_plan' },
  });
}

/** PostgreSQL aborted one of two transactions waiting on each other; the statement is run again. */
const DEADLOCK = '40P01';
const MAX_DEADLOCK_RETRIES = 5;

async function retryingDeadlocks<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: unknown }).code !== DEADLOCK || attempt >= MAX_DEADLOCK_RETRIES) throw err;
    }
  }
}

export class FarmRepository implements FarmStore {
  /** The subjects FarmJob events are published on. */
  private readonly subject: string;
  private readonly createSubject: string;

  constructor(
    private readonly db: Knex,
    names: NatsNames,
  ) {
    this.subject = names.eventSubject('FarmJob', 'update');
    this.createSubject = names.eventSubject('FarmJob', 'create');
  }

  insertJob(job: NewFarmJob, event: OutboxEvent): Promise<{ job: StoredRecord } | { refused: FarmJobRefusal }> {
    return guarded(() =>
      this.transaction(async (db) => {
        const r = job.record;
        const data = r.data;
        // A record the submitter may not read counts as absent; its own project as hidden (404).
        const readable = (alias: string) => (job.reader === null ? 'true' : readableSql(alias, '$5'));
        const check = await queryText<{ project_live: boolean; project_readable: boolean; bad: string[] | null; version_ok: boolean; task_ok: boolean }>(
          db,
          `select exists (select 1 from records.record p where p.id = $1::uuid and p.entity_type = 'Project' and p.retired_at is null) as project_live,
                  exists (select 1 from records.record p where p.id = $1::uuid and ${readable('p')}) as project_readable,
                  (select array_agg(d.i - 1) from unnest($2::uuid[]) with ordinality d(id, i)
                    where not exists (select 1 from records.record x join records.farm_job f on f.id = x.id
                                       where x.id = d.id and x.entity_type = 'FarmJob' and x.retired_at is null and ${readable('x')})) as bad,
                  ($3::uuid is null or exists (select 1 from records.record v
                    where v.id = $3::uuid and v.entity_type = 'Version' and v.retired_at is null and ${readable('v')})) as version_ok,
                  ($4::uuid is null or exists (select 1 from records.record t
                    where t.id = $4::uuid and t.entity_type = 'Task' and t.retired_at is null and ${readable('t')})) as task_ok`,
          [
            r.projectId,
            job.dependsOn,
            (data.version_id as string | undefined) ?? null,
            (data.task_id as string | undefined) ?? null,
            ...(job.reader === null ? [] : [membershipProbe(job.reader)]),
          ],
        );
        const c = check[0]!;
        const badLinks: FarmJobRefusal['badLinks'] = [];
        if (!c.version_ok) badLinks.push('version_id');
        if (!c.task_ok) badLinks.push('task_id');
        const bad = (c.bad ?? []).map(Number).sort((a, b) => a - b);
        const projectHidden = c.project_live && !c.project_readable;
        if (!c.project_live || projectHidden || bad.length || badLinks.length) {
          return { refused: { projectLive: c.project_live, projectHidden, badDependencies: bad, badLinks } };
        }
        const inserted = await queryText<{ json: Row }>(
          db,
          `with c as (select clock_timestamp() as ts),
           r as (
             insert into records.record (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
             select $1, 'FarmJob', $2::uuid, $3, $4, $5, $6, c.ts, c.ts, $7::jsonb from c
             returning *
           ),
           o as (${recordsOutbox.insertFrom(`select $8, $9, ${stampedPayload('$10::jsonb', sqlIsoMicros('r.updated_at'))} from r`)})
           select ${recordJson('r')} as json from r`,
          [r.id, r.projectId, r.status, r.active, r.thumbnailId, r.createdBy, JSON.stringify(data), event.payload.event_id, this.createSubject, event.json],
        );
        // Dependencies are locked so none changes status until this job is committed (the
        // sweeper also recounts pending dependencies: docs/farm.md, "Dependencies").
        const fj = await queryText<{ seq: string; offerable: boolean }>(
          db,
          `with deps as (select id, status from records.farm_job where id = any($8::uuid[]) order by id for share)
           insert into records.farm_job (id, status, pool, kind, priority, max_attempts, manager, depends_on, deps_pending)
           values ($1, $2, $3, $4, $5, $6, $7, $8::uuid[], (select count(*) from deps where status <> 'done'))
           returning seq, offerable`,
          [r.id, r.status, job.pool, job.kind, job.priority, job.maxAttempts, job.manager, job.dependsOn],
        );
        const { seq, offerable } = fj[0]!;
        const ids = job.chunks.map(() => newId());
        await queryText(
          db,
          `insert into records.farm_chunk (id, job_id, idx, frames, max_attempts, pool, kind, priority, job_seq, offerable)
           select c.id, $2, (c.i - 1)::int, c.frames, $4, $5, $6, $7, $8, $9
             from unnest($1::uuid[], $3::text[]) with ordinality c(id, frames, i)`,
          [ids, r.id, job.chunks, job.maxAttempts, job.pool, job.kind, job.priority, seq, offerable],
        );
        return { job: toStored(inserted[0]!.json) };
      }),
    );
  }

  findJob(id: string, reader: string | null): Promise<FarmJobState | undefined> {
    return guarded(async () => {
      const p = new Params();
      const job = p.add(id);
      const readable = andJobReadable(p, reader, 'r.id');
      const res = await queryText<{ json: Row; ever_claimed: boolean; manager: string | null }>(
        this.db,
        `select ${recordJson('r')} as json, f.ever_claimed, f.manager from records.record r join records.farm_job f on f.id = r.id where r.id = ${job}${readable}`,
        p.values,
      );
      const row = res[0];
      return row ? { record: toStored(row.json), everClaimed: row.ever_claimed, manager: row.manager } : undefined;
    });
  }

  claim(input: FarmClaimInput, stamp: FarmEventStamp): Promise<FarmClaimOutcome> {
    const { text, values } = claimStatement(this.subject, input, stamp);
    return guarded(async () => {
      const res = await retryingDeadlocks(() => queryPrepared<LeaseRow & { burned: boolean }>(this.db, text, values));
      const row = res[0]!;
      const event = row.event ?? null;
      if (row.chunk && row.job) return { kind: 'given', chunk: toChunk(row.chunk), job: toStored(row.job), event };
      return row.burned ? { kind: 'burned', event } : { kind: 'none' };
    });
  }

  heartbeat(lease: FarmLease, progress: number | null): Promise<FarmLeaseOutcome> {
    const p = new Params();
    const [chunk, digest, beat] = [p.add(lease.chunkId), p.add(lease.leaseDigest), p.add(progress)];
    const readable = andJobReadable(p, lease.reader, 'c.job_id');
    return guarded(async () => {
      const res = await queryPrepared<LeaseRow>(
        this.db,
        `with ch as (
           update records.farm_chunk c
              set lease_expires_at = clock_timestamp() + make_interval(secs => c.lease_seconds), progress = coalesce(${beat}::smallint, c.progress)
            where c.id = ${chunk} and c.state = 'leased' and c.lease_digest = ${digest} and c.lease_expires_at > clock_timestamp()
              and exists (select 1 from records.farm_job f where f.id = c.job_id and f.status <> 'cancelled')${readable}
           returning c.*
         )
         select ${chunkJson('ch')} as chunk, (select ${recordJson('r')} from records.record r where r.id = ch.job_id) as job from ch`,
        p.values,
      );
      return this.leaseOutcome(res[0], lease);
    });
  }

  complete(lease: FarmLease, outputJson: string | null, stamp: FarmEventStamp): Promise<FarmLeaseOutcome> {
    const p = new Params();
    const chunk = p.add(lease.chunkId);
    const digest = p.add(lease.leaseDigest);
    const output = p.add(outputJson);
    return this.leaseChange(p, { id: lease.chunkId, chunk, digest, reader: lease.reader }, stamp, {
      set: `state = 'done', output = cast(${output} as json), progress = 100, lease_digest = null, finished_at = clock_timestamp()`,
      job: `select ch.job_id, null::text as new_status, 1 as d_done, 0 as d_failed, 0 as d_att from ch`,
    });
  }

  fail(lease: FarmLease, error: string, stamp: FarmEventStamp): Promise<FarmLeaseOutcome> {
    const p = new Params();
    const chunk = p.add(lease.chunkId);
    const digest = p.add(lease.leaseDigest);
    const err = p.add(error);
    return this.leaseChange(p, { id: lease.chunkId, chunk, digest, reader: lease.reader }, stamp, {
      set: `state = case when c.attempts + 1 >= c.max_attempts then 'failed' else 'queued' end,
               attempts = c.attempts + 1, error = ${err}, lease_digest = null, lease_expires_at = null,
               finished_at = case when c.attempts + 1 >= c.max_attempts then clock_timestamp() end`,
      job: `select ch.job_id, case when ch.state = 'failed' then 'failed' end as new_status, 0 as d_done,
               (ch.state = 'failed')::int as d_failed, 1 as d_att
          from ch`,
    });
  }

  /**
   * A lease-holding change of one chunk (complete, fail) as one statement: the job's record locked
   * (`o`), the chunk changed by `change.set` while its lease is current and the job not cancelled
   * (`ch`), the job-level change `change.job` selects from `ch` (`jc`, see jobChange), and the
   * answer: the chunk, the job and its event. `chunk` and `digest` are the placeholders of the
   * chunk's id and the lease's digest in `p`.
   */
  private leaseChange(
    p: Params,
    lease: { id: string; chunk: string; digest: string; reader: string | null },
    stamp: FarmEventStamp,
    change: { set: string; job: string },
  ): Promise<FarmLeaseOutcome> {
    const { chunk, digest } = lease;
    const readable = andJobReadable(p, lease.reader, 'r.id');
    const sql = `with o as (
        select r.id, r.status, r.data from records.record r
         where r.id = (select job_id from records.farm_chunk where id = ${chunk})${readable} for update
      ),
      ch as (
        update records.farm_chunk c
           set ${change.set}
          from o
         where c.id = ${chunk} and c.job_id = o.id and o.status <> 'cancelled'
           and c.state = 'leased' and c.lease_digest = ${digest} and c.lease_expires_at > clock_timestamp()
        returning c.*
      ),
      jc as (${change.job})${jobChange(p, stamp, this.subject, false, `select ${chunk}::uuid`)}
      select (select ${chunkJson('ch')} from ch) as chunk,
             (select coalesce((select rec.json from rec), (select ${recordJson('r')} from records.record r where r.id = ch.job_id)) from ch) as job,
             (select payload from ev) as event`;
    return guarded(async () => {
      const res = await retryingDeadlocks(() => queryPrepared<LeaseRow>(this.db, sql, p.values));
      return this.leaseOutcome(res[0], { chunkId: lease.id, reader: lease.reader });
    });
  }

  expireLeases(limit: number, stamp: () => FarmEventStamp): Promise<{ expired: number; events: StreamEvent[] }> {
    return guarded(async () => {
      let n = 0;
      const events: StreamEvent[] = [];
      while (n < limit) {
        const p = new Params();
        const sql = `with pick as (
            select c.id, c.attempts, c.max_attempts from records.farm_chunk c
             where c.state = 'leased' and c.lease_expires_at <= statement_timestamp()
             order by c.lease_expires_at
             for update skip locked
             limit 1
          ),
          ex as (
            update records.farm_chunk c
               set state = case when pick.attempts + 1 >= pick.max_attempts then 'failed' else 'queued' end,
                   attempts = c.attempts + 1, error = 'the lease ran out', lease_digest = null, lease_expires_at = null,
                   finished_at = case when pick.attempts + 1 >= pick.max_attempts then clock_timestamp() end
              from pick
             where c.id = pick.id
            returning c.id, c.job_id, c.state
          ),
          jc as (
            select ex.job_id, case when ex.state = 'failed' then 'failed' end as new_status, 0 as d_done,
                   (ex.state = 'failed')::int as d_failed, 1 as d_att
              from ex
          )${jobChange(p, stamp(), this.subject, true, 'select id from pick')}
          select count(*)::int as n, (select payload from ev) as event from ex`;
        const res = await retryingDeadlocks(() => queryPrepared<{ n: number; event: StreamEvent | null }>(this.db, sql, p.values));
        const row = res[0]!;
        if (row.n === 0) break;
        n += 1;
        if (row.event) events.push(row.event);
      }
      await this.repairDependencies();
      return { expired: n, events };
    });
  }

  /**
   * Recounts the pending dependencies of jobs still waiting (a dependency that became done while
   * its dependent was being created is caught here) and puts the chunks of jobs that became
   * offerable into the claim index.
   */
  private async repairDependencies(): Promise<void> {
    await queryText(
      this.db,
      `with fixed as (
         update records.farm_job d
            set deps_pending = n.pending
           from (select j.id, (select count(*) from records.farm_job x where x.id = any(j.depends_on) and x.status <> 'done')::int as pending
                   from records.farm_job j where j.deps_pending > 0) n
          where d.id = n.id and d.deps_pending <> n.pending
         returning d.id, d.offerable
       )
       update records.farm_chunk c set offerable = true
         from fixed
        where c.job_id = fixed.id and fixed.offerable and not c.offerable and c.state in ('queued', 'leased')`,
    );
  }

  changeJob(id: string, decide: (job: FarmJobState) => FarmJobChange, stamp: FarmEventStamp): Promise<{ record: StoredRecord; event: StreamEvent | null }> {
    return guarded(() =>
      retryingDeadlocks(() =>
        this.transaction(async (db) => {
          const cur = await queryText<{ json: Row; ever_claimed: boolean; manager: string | null }>(
            db,
            `select ${recordJson('r')} as json, f.ever_claimed, f.manager
               from records.record r join records.farm_job f on f.id = r.id where r.id = $1 for update of r, f`,
            [id],
          );
          const row = cur[0];
          if (!row) throw AppError.notFound(`FarmJob ${id} not found`);
          const before = toStored(row.json);
          const change = decide({ record: before, everClaimed: row.ever_claimed, manager: row.manager });
          const data: Record<string, unknown> = { ...(change.data ?? {}) };
          if (change.requeueFailed) {
            const requeued = await queryText(
              db,
              `update records.farm_chunk set state = 'queued', attempts = 0, error = null, finished_at = null where job_id = $1 and state = 'failed' returning 1`,
              [id],
            );
            if (requeued.length > 0 || before.data.chunks_failed !== 0) data.chunks_failed = 0;
          }
          const changes: Record<string, unknown> = {};
          if (change.status !== before.status) changes.status = change.status;
          for (const [k, v] of Object.entries(data)) if (JSON.stringify(before.data[k]) !== JSON.stringify(v)) changes[k] = v;
          if (Object.keys(changes).length === 0) return { record: before, event: null };
          const fj = await queryText<{ offerable: boolean }>(db, `update records.farm_job set status = $2 where id = $1 returning offerable`, [
            id,
            change.status,
          ]);
          const offerable = fj[0]!.offerable;
          await queryText(db, `update records.farm_chunk set offerable = $2 where job_id = $1 and offerable <> $2 and state in ('queued', 'leased')`, [
            id,
            offerable,
          ]);
          if (change.status !== before.status && (change.status === 'done' || before.status === 'done')) {
            // Dependents wait on done jobs only: recount theirs and open or close their chunks.
            await queryText(
              db,
              `with d as (
                 update records.farm_job d
                    set deps_pending = (select count(*) from records.farm_job x where x.id = any(d.depends_on) and x.status <> 'done')
                  where d.depends_on @> array[$1::uuid]
                 returning d.id, d.offerable
               )
               update records.farm_chunk c set offerable = d.offerable
                 from d where c.job_id = d.id and c.offerable <> d.offerable and c.state in ('queued', 'leased')`,
              [id],
            );
          }
          const template = JSON.stringify({ event_id: stamp.eventId, entity_type: 'FarmJob', action: 'update', actor: stamp.actor, changes });
          const updated = await queryText<{ json: Row; event: StreamEvent }>(
            db,
            `with r0 as (
               update records.record r set status = $2, data = r.data || $3::jsonb, updated_at = ${NEXT_UPDATED_AT}
                where r.id = $1
               returning r.*
             ),
             ev as (
               ${recordsOutbox.insertFrom(
                 `select $4, $5, $6::jsonb || jsonb_build_object('entity_id', r0.id, 'project_id', r0.project_id, 'occurred_at', ${sqlIsoMicros('r0.updated_at')}) from r0`,
                 'payload',
               )}
             )
             select ${recordJson('r0')} as json, (select payload from ev) as event from r0`,
            [id, change.status, JSON.stringify(data), stamp.eventId, this.subject, template],
          );
          const out = updated[0]!;
          return { record: toStored(out.json), event: out.event };
        }),
      ),
    );
  }

  /**
   * `sized` reads the sizes only (octet_length of a text or json value is its stored length: no
   * value is read in full), `limit + 1` rows at most in index order, each with the bytes of the
   * rows before it; the page is the rows that start under the budget, built as JSON only for them.
   * More follow when a row was left out (by the budget, or the one past `limit`).
   */
  listChunks(jobId: string, page: FarmChunkPage): Promise<{ chunks: FarmChunkRow[]; more: boolean }> {
    return guarded(async () => {
      const res = await queryPrepared<{ chunk: ChunkJson; seen: number }>(
        this.db,
        `with sized as (
           select c.id, c.idx,
                  sum($5::int + coalesce(octet_length(c.frames), 0) + coalesce(octet_length(c.error), 0)
                      + coalesce(octet_length(c.worker), 0) + coalesce(octet_length(c.output::text), 0))
                    over (order by c.idx rows between unbounded preceding and 1 preceding) as before
             from records.farm_chunk c
            where c.job_id = $1 and c.idx > $2
            order by c.idx
            limit $3
         )
         select ${chunkJson('c')} as chunk, (select count(*)::int from sized) as seen
           from sized s join records.farm_chunk c on c.id = s.id
          where coalesce(s.before, 0) < $4
          order by s.idx`,
        [jobId, page.afterIndex, page.limit + 1, page.maxBytes, page.fixedBytes],
      );
      const chunks = res.map((r) => toChunk(r.chunk));
      const more = chunks.length > page.limit || (res[0]?.seen ?? 0) > chunks.length;
      return { chunks: chunks.slice(0, page.limit), more };
    });
  }

  /**
   * The chunk a lease statement changed, or whether the chunk exists at all for the caller (404 vs
   * 409): a chunk of a job in a project `reader` may not read is not found.
   */
  private async leaseOutcome(row: LeaseRow | undefined, lease: Pick<FarmLease, 'chunkId' | 'reader'>): Promise<FarmLeaseOutcome> {
    if (row?.chunk && row.job) return { chunk: toChunk(row.chunk), job: toStored(row.job), event: row.event ?? null };
    const p = new Params();
    const chunk = p.add(lease.chunkId);
    const res = await queryText(this.db, `select 1 from records.farm_chunk c where c.id = ${chunk}${andJobReadable(p, lease.reader, 'c.job_id')}`, p.values);
    return res.length ? 'lease_lost' : 'not_found';
  }

  private transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.db.transaction((trx) => fn(trx));
  }
}
