/**
 * Jobs and attempts in schema `media`. Every public method is one `guarded` statement (or a
 * short transaction), so a database that is down surfaces as `unavailable`.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlRows } from '@reelbase/lib-platform';
import type { AttemptSummary, FinishedJob, Job, JobOutputs, JobStore, NewJob, Reservation } from '../domain/ports.js';

interface JobDbRow {
  id: string;
  representation_id: string | null;
  version_id: string;
  project_id: string | null;
  original_key: string;
  original_size: string;
  content_type: string;
  file_name: string;
  state: Job['state'];
  published_at: Date | null;
  created_at: Date;
  review_kind: string | null;
  proxy_key: string | null;
  thumbnail_key: string | null;
  files: Record<string, unknown> | null;
  error: string | null;
}

const outputsOf = (r: { review_kind: string | null; proxy_key: string | null; thumbnail_key: string | null }): JobOutputs | null =>
  r.proxy_key && r.thumbnail_key && (r.review_kind === 'video' || r.review_kind === 'image')
    ? { reviewKind: r.review_kind, proxyKey: r.proxy_key, thumbnailKey: r.thumbnail_key }
    : null;

const toJob = (r: JobDbRow): Job => ({
  id: r.id,
  representationId: r.representation_id ?? '',
  versionId: r.version_id,
  projectId: r.project_id,
  originalKey: r.original_key,
  originalSize: Number(r.original_size),
  contentType: r.content_type,
  fileName: r.file_name,
  state: r.state,
  publishedAt: r.published_at ? new Date(r.published_at).toISOString() : null,
  createdAt: new Date(r.created_at).toISOString(),
  outputs: outputsOf(r),
  files: r.files,
  error: r.error,
});

/** The jobs table in SQL on the ORM's Knex (the database handle, given once). */
export class JobRepository implements JobStore {
  constructor(private readonly orm: MikroORM) {}

  private exec<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return sqlRows<T>(this.orm.em.getConnection().getKnex(), sql, params);
  }

  /** Reserves the job (state `creating`) before its Representation is created. */
  async reserve(j: NewJob): Promise<void> {
    await guarded(() =>
      this.exec(
        `insert into "media"."jobs" ("id", "state", "version_id", "project_id", "original_key", "original_size", "content_type", "file_name")
         values (?, 'creating', ?, ?, ?, ?, ?, ?)`,
        [j.id, j.versionId, j.projectId, j.originalKey, j.originalSize, j.contentType, j.fileName],
      ),
    );
  }

  /** Gives a reservation its Representation: the job is queued. False when it was no reservation any more. */
  async attach(id: string, representationId: string): Promise<boolean> {
    const rows = await guarded(() =>
      this.exec<{ id: string }>(
        `update "media"."jobs" set "representation_id" = ?, "state" = 'queued', "updated_at" = clock_timestamp()
         where "id" = ? and "state" = 'creating' returning "id"`,
        [representationId, id],
      ),
    );
    return rows.length === 1;
  }

  /** Drops a reservation whose Representation was never created. */
  async dropReservation(id: string): Promise<void> {
    await guarded(() => this.exec(`delete from "media"."jobs" where "id" = ? and "state" = 'creating'`, [id]));
  }

  /** Reservations older than `ageMs`: uploads whose process stopped while creating the Representation. */
  async staleReservations(ageMs: number, limit = 100): Promise<Reservation[]> {
    const rows = await guarded(() =>
      this.exec<{ id: string; version_id: string; original_key: string }>(
        `select "id", "version_id", "original_key" from "media"."jobs"
         where "state" = 'creating' and "created_at" < clock_timestamp() - ? * interval '1 millisecond'
         order by "created_at" limit ?`,
        [ageMs, limit],
      ),
    );
    return rows.map((r) => ({ id: r.id, versionId: r.version_id, originalKey: r.original_key }));
  }

  async get(id: string): Promise<Job | undefined> {
    const rows = await guarded(() => this.exec<JobDbRow>('select * from "media"."jobs" where "id" = ?', [id]));
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /** The latest upload of a Version. */
  async latestForVersion(versionId: string): Promise<Job | undefined> {
    const rows = await guarded(() =>
      this.exec<JobDbRow>(`select * from "media"."jobs" where "version_id" = ? and "state" <> 'creating' order by "created_at" desc, "id" desc limit 1`, [
        versionId,
      ]),
    );
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  async markPublished(id: string): Promise<void> {
    await guarded(() => this.exec('update "media"."jobs" set "published_at" = clock_timestamp() where "id" = ?', [id]));
  }

  /**
   * Jobs to (re)publish: never published and older than `graceMs`, or unfinished without progress
   * for `staleMs`, or finished for `staleMs` with their Representation's copy behind (`markCopied`).
   */
  async toPublish(graceMs: number, staleMs: number, limit = 100): Promise<{ id: string; published: boolean }[]> {
    const rows = await guarded(() =>
      this.exec<{ id: string; published: boolean }>(
        `select "id", "published_at" is not null as "published" from "media"."jobs"
         where ("published_at" is null and "state" <> 'creating' and "created_at" < clock_timestamp() - ? * interval '1 millisecond')
            or ("state" in ('queued', 'processing') and "updated_at" < clock_timestamp() - ? * interval '1 millisecond'
                and ("lease_until" is null or "lease_until" < clock_timestamp()))
            or ("state" in ('done', 'failed') and "copied_state" is distinct from "state"
                and "updated_at" < clock_timestamp() - ? * interval '1 millisecond')
         order by "created_at" limit ?`,
        [graceMs, staleMs, staleMs, limit],
      ),
    );
    return rows.map((r) => ({ id: r.id, published: Boolean(r.published) }));
  }

  /** Marks a job as published again now (re-queued by the sweeper), so it is not picked again at once. */
  async touch(id: string): Promise<void> {
    await guarded(() => this.exec('update "media"."jobs" set "published_at" = clock_timestamp(), "updated_at" = clock_timestamp() where "id" = ?', [id]));
  }

  /**
   * Takes the job for `owner` for `leaseMs` unless another worker holds a live lease. True when taken
   * (or already held by `owner`).
   */
  async claim(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await guarded(() =>
      this.exec<{ id: string }>(
        `update "media"."jobs" set "lease_owner" = ?, "lease_until" = clock_timestamp() + ? * interval '1 millisecond',
           "state" = case when "state" = 'queued' then 'processing' else "state" end, "updated_at" = clock_timestamp()
         where "id" = ? and ("lease_until" is null or "lease_until" < clock_timestamp() or "lease_owner" = ?)
         returning "id"`,
        [owner, leaseMs, id, owner],
      ),
    );
    return rows.length === 1;
  }

  /** Extends the lease while the worker is busy (with each heartbeat). */
  async renew(id: string, owner: string, leaseMs: number): Promise<void> {
    await guarded(() =>
      this.exec(
        `update "media"."jobs" set "lease_until" = clock_timestamp() + ? * interval '1 millisecond', "updated_at" = clock_timestamp()
         where "id" = ? and "lease_owner" = ?`,
        [leaseMs, id, owner],
      ),
    );
  }

  /** Drops the lease so the next delivery can take the job at once. */
  async release(id: string, owner: string): Promise<void> {
    await guarded(() => this.exec('update "media"."jobs" set "lease_owner" = null, "lease_until" = null where "id" = ? and "lease_owner" = ?', [id, owner]));
  }

  async finish(id: string, state: 'done' | 'failed', error: string | null = null): Promise<void> {
    await guarded(() =>
      this.exec(
        'update "media"."jobs" set "state" = ?, "error" = ?, "lease_owner" = null, "lease_until" = null, "updated_at" = clock_timestamp() where "id" = ?',
        [state, error, id],
      ),
    );
  }

  /** Records that the Representation now shows `state`, unless the job has moved on since. */
  async markCopied(id: string, state: 'done' | 'failed'): Promise<void> {
    await guarded(() => this.exec('update "media"."jobs" set "copied_state" = ? where "id" = ? and "state" = ?', [state, id, state]));
  }

  async finishDone(id: string, o: JobOutputs, files: Record<string, unknown>): Promise<void> {
    await guarded(() =>
      this.exec(
        `update "media"."jobs" set "state" = 'done', "error" = null, "review_kind" = ?, "proxy_key" = ?, "thumbnail_key" = ?, "files" = ?::jsonb,
           "lease_owner" = null, "lease_until" = null, "updated_at" = clock_timestamp() where "id" = ?`,
        [o.reviewKind, o.proxyKey, o.thumbnailKey, JSON.stringify(files), id],
      ),
    );
  }

  /** Attempts started so far and the last recorded error. */
  async attempts(jobId: string): Promise<AttemptSummary> {
    const rows = await guarded(() =>
      this.exec<{ count: string; last_error: string | null }>(
        `select count(*) as count,
                (select "error" from "media"."attempts" where "job_id" = ? and "error" is not null order by "attempt" desc limit 1) as last_error
         from "media"."attempts" where "job_id" = ?`,
        [jobId, jobId],
      ),
    );
    return { count: Number(rows[0]?.count ?? 0), lastError: rows[0]?.last_error ?? null };
  }

  /**
   * Records the start of an attempt for one delivery of the job's message. A delivery seen again
   * (the same message handled twice) keeps its attempt number: attempts count real attempts only.
   */
  async startAttempt(jobId: string, delivery: { streamSeq: number; count: number }, worker: string): Promise<number> {
    return guarded(async () => {
      const inserted = await this.exec<{ attempt: number }>(
        `insert into "media"."attempts" ("job_id", "stream_seq", "delivery", "attempt", "worker")
         select ?, ?, ?, coalesce(max("attempt"), 0) + 1, ? from "media"."attempts" where "job_id" = ?
         on conflict ("job_id", "stream_seq", "delivery") do nothing
         returning "attempt"`,
        [jobId, delivery.streamSeq, delivery.count, worker, jobId],
      );
      if (inserted[0]) return Number(inserted[0].attempt);
      const existing = await this.exec<{ attempt: number }>(
        'select "attempt" from "media"."attempts" where "job_id" = ? and "stream_seq" = ? and "delivery" = ?',
        [jobId, delivery.streamSeq, delivery.count],
      );
      return Number(existing[0]!.attempt);
    });
  }

  async endAttempt(jobId: string, attempt: number, outcome: 'done' | 'failed' | 'retry' | 'interrupted', error: string | null): Promise<void> {
    await guarded(() =>
      this.exec('update "media"."attempts" set "finished_at" = clock_timestamp(), "outcome" = ?, "error" = ? where "job_id" = ? and "attempt" = ?', [
        outcome,
        error,
        jobId,
        attempt,
      ]),
    );
  }

  /** Forgets an attempt that a dependency failure cut short (it does not count). */
  async deleteAttempt(jobId: string, attempt: number): Promise<void> {
    await guarded(() => this.exec('delete from "media"."attempts" where "job_id" = ? and "attempt" = ?', [jobId, attempt]));
  }

  /** Keeps what a job finished before outputs were kept produced (found beside its original). */
  async recordOutputs(id: string, o: JobOutputs): Promise<void> {
    await guarded(() =>
      this.exec('update "media"."jobs" set "review_kind" = ?, "proxy_key" = ?, "thumbnail_key" = ? where "id" = ?', [
        o.reviewKind,
        o.proxyKey,
        o.thumbnailKey,
        id,
      ]),
    );
  }

  /** Per version among `versionIds`, the newest `done` job (versions without one are left out). */
  async newestDone(versionIds: readonly string[]): Promise<FinishedJob[]> {
    if (versionIds.length === 0) return [];
    const rows = await guarded(() =>
      this.exec<{ id: string; version_id: string; original_key: string; review_kind: string | null; proxy_key: string | null; thumbnail_key: string | null }>(
        `select distinct on ("version_id") "id", "version_id", "original_key", "review_kind", "proxy_key", "thumbnail_key"
         from "media"."jobs" where "version_id" in (${versionIds.map(() => '?').join(', ')}) and "state" = 'done'
         order by "version_id", "created_at" desc, "id" desc`,
        [...versionIds],
      ),
    );
    return rows.map((r) => ({
      id: r.id,
      versionId: r.version_id,
      originalKey: r.original_key,
      outputs: outputsOf(r),
    }));
  }

  /** True when a later upload of the same Version is already done (its thumbnail must win). */
  async newerDoneExists(job: Job): Promise<boolean> {
    const rows = await guarded(() =>
      this.exec<{ n: string }>(`select count(*) as n from "media"."jobs" where "version_id" = ? and "id" <> ? and "state" = 'done' and "created_at" > ?`, [
        job.versionId,
        job.id,
        job.createdAt,
      ]),
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }

  /** Every attempt of a job, oldest first (tests and diagnostics). */
  async listAttempts(jobId: string): Promise<{ attempt: number; delivery: number; outcome: string | null; error: string | null }[]> {
    return guarded(() =>
      this.exec<{ attempt: number; delivery: number; outcome: string | null; error: string | null }>(
        'select "attempt", "delivery", "outcome", "error" from "media"."attempts" where "job_id" = ? order by "attempt"',
        [jobId],
      ),
    );
  }
}
