/**
 * The SQL of the farm's one-statement changes (docs/farm.md): the claim, and the job-level half
 * every chunk statement shares (the FarmJob record, its outbox event, the farm row and the
 * offerability of its chunks), with the JSON forms the statements answer in.
 */
import { sqlIsoMicros, type StreamEvent } from '@reelbase/lib-platform';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import { recordsOutbox } from '../../kernel/store/outbox.repository.js';
import { readableSql } from '../../kernel/store/project.readers.sql.js';
import type { Row } from '../../kernel/store/record.repository.js';
import type { FarmChunkRow, FarmClaimInput, FarmEventStamp } from '../domain/farm.ports.js';

/** Positional parameters of one statement. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** A records.record row as JSON in its stored form. */
export const recordJson = (a: string) => `json_build_object('id', ${a}.id, 'entity_type', ${a}.entity_type, 'project_id', ${a}.project_id,
  'status', ${a}.status, 'active', ${a}.active, 'thumbnail_id', ${a}.thumbnail_id, 'created_by', ${a}.created_by,
  'created_at', ${sqlIsoMicros(`${a}.created_at`)}, 'updated_at', ${sqlIsoMicros(`${a}.updated_at`)},
  'retired', ${a}.retired_at is not null, 'data', ${a}.data)`;

/** A farm_chunk row as JSON. */
export const chunkJson = (a: string) => `json_build_object('id', ${a}.id, 'job_id', ${a}.job_id, 'idx', ${a}.idx, 'frames', ${a}.frames,
  'state', ${a}.state, 'attempts', ${a}.attempts, 'claims', ${a}.claims,
  'lease_expires_at', ${sqlIsoMicros(`${a}.lease_expires_at`)}, 'progress', ${a}.progress, 'worker', ${a}.worker,
  'error', ${a}.error, 'output', ${a}.output)`;

export interface ChunkJson {
  id: string;
  job_id: string;
  idx: number;
  frames: string | null;
  state: FarmChunkRow['state'];
  attempts: number;
  claims: number;
  lease_expires_at: string | null;
  progress: number | null;
  worker: string | null;
  error: string | null;
  output: unknown;
}

export const toChunk = (c: ChunkJson): FarmChunkRow => ({
  id: c.id,
  jobId: c.job_id,
  index: c.idx,
  frames: c.frames,
  state: c.state,
  attempts: c.attempts,
  claims: c.claims,
  leaseExpiresAt: c.lease_expires_at,
  progress: c.progress,
  worker: c.worker,
  error: c.error,
  output: c.output ?? null,
});

/**
 * The reader rule on a chunk's job (kernel/store/project.readers.sql.ts; docs/farm.md, "Restricted
 * projects"): ` and <the FarmJob record `jobIdSql` is in a project `reader` may read>`, or nothing for
 * a caller who reads every project (`reader` null: an Admin, a service), whose statements stay as they
 * were. A scalar subquery, which PostgreSQL never turns into a join: one primary-key lookup of the
 * job's record per chunk the scan looks at (an EXISTS was pulled up into a join that read every
 * record). The projects hidden from the reader are one uncorrelated subquery, hashed once.
 */
export function andJobReadable(p: Params, reader: string | null, jobIdSql: string): string {
  if (reader === null) return '';
  return ` and coalesce((select ${readableSql('j', p.add(membershipProbe(reader)))} from records.record j where j.id = ${jobIdSql}), false)`;
}

export const NEXT_UPDATED_AT = `greatest(clock_timestamp(), r.updated_at + interval '1 microsecond')`;

/**
 * The job-level half of a chunk statement. Expects a CTE `jc(job_id, new_status, d_done,
 * d_failed, d_att)` (at most one row: the job a chunk change touches) and, unless `lockOld`, a
 * CTE `o(id, status, data)` holding the job's record row locked. Defines:
 * - `rec`: the record with its new status (`running` on a first claim, `failed` when a chunk ran
 *   out of attempts, `done` when the last chunk is done) and counters, updated only when
 *   something changes;
 * - `ev`: its outbox event (an `update` whose `changes` hold exactly what changed), returning
 *   the payload written, which the statement hands back as `event` for the service's bus;
 * - `fj`: the farm row's status; when the job stops being offerable its open chunks leave the
 *   claim index (except `exclude`, the chunk this statement already changed);
 * - dependents of a job that became done: their pending count recomputed and, once offerable,
 *   their open chunks put into the claim index.
 */
export function jobChange(p: Params, stamp: FarmEventStamp, subject: string, lockOld: boolean, excludeSql: string): string {
  const template = JSON.stringify({ event_id: stamp.eventId, entity_type: 'FarmJob', action: 'update', actor: stamp.actor });
  // Each CTE touches at most one job: a scalar subquery keeps every lookup on a primary key
  // whatever the planner thinks of the tables' sizes.
  const old = lockOld ? `, o as (select r.id, r.status, r.data from records.record r where r.id = (select job_id from jc limit 1) for update)` : '';
  return `${old},
  x as (
    select o.id, o.status as old_status, jc.d_done, jc.d_failed, jc.d_att,
           coalesce((o.data->>'chunks_done')::int, 0) + jc.d_done as done,
           coalesce((o.data->>'chunks_failed')::int, 0) + jc.d_failed as failed,
           coalesce((o.data->>'attempts_failed')::int, 0) + jc.d_att as att,
           coalesce((o.data->>'chunks_total')::int, 0) as total,
           case
             when jc.new_status = 'failed' and o.status in ('queued', 'running', 'paused') then 'failed'
             when jc.new_status = 'running' and o.status = 'queued' then 'running'
             when jc.d_done > 0 and o.status in ('queued', 'running', 'paused')
                  and coalesce((o.data->>'chunks_done')::int, 0) + jc.d_done >= coalesce((o.data->>'chunks_total')::int, 0) then 'done'
             else o.status
           end as next_status
      from jc join o on o.id = jc.job_id
  ),
  y as (
    select x.*, case when total > 0 then (100 * done) / total else 0 end as progress,
           case when total > 0 then (100 * (done - d_done)) / total else 0 end as old_progress
      from x
  ),
  rec as (
    update records.record r
       set status = y.next_status,
           data = r.data || jsonb_build_object('chunks_done', y.done, 'chunks_failed', y.failed, 'attempts_failed', y.att, 'progress', y.progress),
           updated_at = ${NEXT_UPDATED_AT}
      from y
     where r.id = (select id from y) and r.id = y.id and (y.next_status is distinct from y.old_status or y.d_done <> 0 or y.d_failed <> 0 or y.d_att <> 0)
    returning r.id, r.project_id, r.status, y.old_status, y.d_done, y.d_failed, y.d_att, y.done, y.failed, y.att, y.progress, y.old_progress,
              ${sqlIsoMicros('r.updated_at')} as updated_iso, ${recordJson('r')} as json
  ),
  ev as (
    ${recordsOutbox.insertFrom(
      `select ${p.add(stamp.eventId)}, ${p.add(subject)}, cast(${p.add(template)} as jsonb) || jsonb_build_object(
             'entity_id', rec.id, 'project_id', rec.project_id, 'occurred_at', rec.updated_iso,
             'changes', (case when rec.status is distinct from rec.old_status then jsonb_build_object('status', rec.status) else '{}'::jsonb end)
               || (case when rec.d_done <> 0 then jsonb_build_object('chunks_done', rec.done) else '{}'::jsonb end)
               || (case when rec.progress <> rec.old_progress then jsonb_build_object('progress', rec.progress) else '{}'::jsonb end)
               || (case when rec.d_failed <> 0 then jsonb_build_object('chunks_failed', rec.failed) else '{}'::jsonb end)
               || (case when rec.d_att <> 0 then jsonb_build_object('attempts_failed', rec.att) else '{}'::jsonb end))
      from rec`,
      'payload',
    )}
  ),
  fj as (
    update records.farm_job f
       set status = rec.status, ever_claimed = f.ever_claimed or rec.status = 'running'
      from rec
     where f.id = (select id from rec) and f.id = rec.id and f.status is distinct from rec.status
    returning f.id, f.status, f.offerable
  ),
  closed as (
    update records.farm_chunk c set offerable = false
      from fj
     where c.job_id = fj.id and not fj.offerable and c.offerable and c.state in ('queued', 'leased') and c.id not in (${excludeSql})
  ),
  deps as (
    update records.farm_job d
       set deps_pending = (select count(*) from records.farm_job x where x.id = any(d.depends_on) and x.id <> fj.id and x.status <> 'done')
      from fj
     where fj.status = 'done' and d.deps_pending > 0 and d.depends_on @> array[(select id from fj where status = 'done')]
    returning d.id, d.offerable
  ),
  opened as (
    update records.farm_chunk c set offerable = true
      from deps
     where c.job_id = deps.id and deps.offerable and not c.offerable and c.state in ('queued', 'leased')
  )`;
}

/**
 * The claim statement for `input` (docs/farm.md, "The claim: one statement"): its text and its
 * values. Two candidates, each the first of its kind in claim order that nobody else holds:
 * - `queued`: the pool's first queued chunk (`farm_chunk_queue_idx`, which holds queued chunks
 *   only, so a claim never walks past the leases other agents hold);
 * - `lapsed`: the pool's first chunk whose lease ran out (`farm_chunk_lease_idx`, the leases
 *   already past their expiry: usually none, the sweeper queues them again every second);
 * `pick` is the first of the two in claim order. The other one, if any, stays locked until the
 * statement commits and is skipped meanwhile by concurrent claims. For a caller who may not read
 * every project both candidates are chunks of jobs in projects they may read (andJobReadable): the
 * chunks of other projects' jobs are passed over as if they were not there.
 */
export function claimStatement(subject: string, input: FarmClaimInput, stamp: FarmEventStamp): { text: string; values: unknown[] } {
  const p = new Params();
  const pool = p.add(input.pool);
  const kinds = p.add(input.kinds);
  const lease = p.add(input.leaseDigest);
  const seconds = p.add(input.leaseSeconds);
  const worker = p.add(input.worker);
  const columns = 'c.id, c.job_id, c.attempts, c.max_attempts, c.priority, c.job_seq, c.idx';
  const readable = andJobReadable(p, input.reader, 'c.job_id');
  const filter = `c.offerable and c.pool = ${pool} and (${kinds}::text[] is null or c.kind = any(${kinds}::text[]))${readable}`;
  const sql = `with queued as (
        select ${columns}, false as expired
          from records.farm_chunk c
         where c.state = 'queued' and ${filter}
         order by c.priority desc, c.job_seq, c.idx
         for update skip locked
         limit 1
      ),
      lapsed as (
        select ${columns}, true as expired
          from records.farm_chunk c
         where c.state = 'leased' and c.lease_expires_at <= statement_timestamp() and ${filter}
         order by c.priority desc, c.job_seq, c.idx
         for update skip locked
         limit 1
      ),
      pick as (
        select u.id, u.job_id, u.expired, u.attempts, u.max_attempts
          from (select * from queued union all select * from lapsed) u
         order by u.priority desc, u.job_seq, u.idx
         limit 1
      ),
      give as (
        update records.farm_chunk c
           set state = 'leased', attempts = c.attempts + pick.expired::int, claims = c.claims + 1,
               lease_digest = ${lease}, lease_seconds = ${seconds}::int,
               lease_expires_at = clock_timestamp() + make_interval(secs => ${seconds}::int),
               worker = ${worker}, progress = null, error = null, output = null
          from pick
         where c.id = pick.id and not (pick.expired and pick.attempts + 1 >= pick.max_attempts)
        returning c.*, pick.expired
      ),
      burn as (
        update records.farm_chunk c
           set state = 'failed', attempts = c.attempts + 1, error = 'the lease ran out on its last attempt',
               lease_digest = null, lease_expires_at = null, finished_at = clock_timestamp()
          from pick
         where c.id = pick.id and pick.expired and pick.attempts + 1 >= pick.max_attempts
        returning c.id, c.job_id
      ),
      jc as (
        select g.job_id, 'running'::text as new_status, 0 as d_done, 0 as d_failed, g.expired::int as d_att
          from give g join records.farm_job f on f.id = (select job_id from give limit 1)
         where g.expired or not f.ever_claimed
        union all
        select b.job_id, 'failed', 0, 1, 1 from burn b
      )${jobChange(p, stamp, subject, true, 'select id from pick')}
      select (select ${chunkJson('g')} from give g) as chunk,
             (select coalesce((select rec.json from rec where rec.id = g.job_id), (select ${recordJson('r')} from records.record r where r.id = g.job_id))
                from give g) as job,
             exists (select 1 from burn) as burned,
             (select payload from ev) as event`;
  return { text: sql, values: p.values };
}

/** The outcome of a lease statement: the chunk it changed and the job, or nothing; the event it wrote, if any. */
export interface LeaseRow {
  chunk: ChunkJson | null;
  job: Row | null;
  event?: StreamEvent | null;
}
