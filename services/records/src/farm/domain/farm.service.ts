/**
 * The farm (docs/farm.md): FarmJob records cut into chunks that agents claim under leases.
 * Records owns it because a job is a record: its status and counters change in the same
 * transaction as its chunks and its outbox event, and the claim is one statement on records'
 * database. This class holds the rules around the store's statements; every role check and
 * every 422 happens here before the store is asked. The reader rule (docs/api-notes.md,
 * "Restricted projects") is a condition of the store's statements: a caller who may not read a
 * job's project is handed none of its chunks and finds neither the job nor its chunks (404).
 */
import { AppError, encodeStreamEvent, isUuid, newId, type CallContext, type Principal, type StreamEvent } from '@reelbase/lib-platform';
import { createChanges } from '../../kernel/domain/record.changes.js';
import { membershipOf } from '../../kernel/domain/project.readers.js';
import { actorOf, buildEventPayload } from '../../kernel/domain/record.event.js';
import { toView, type OutboxEvent, type StoredRecord } from '../../kernel/domain/record.ports.js';
import type { RecordView } from '../../kernel/domain/record.types.js';
import {
  assertAgentPool,
  assertFarmWriter,
  assertJobManager,
  CHUNK_FIXED_BYTES,
  CHUNK_PAGE_BYTES,
  checkChunkPage,
  checkCreateJob,
  checkOutput,
  checkReport,
  encodeChunkCursor,
  JOB_ACTIONS,
  LIMITS,
  leaseDigest,
  newLease,
  nextStatus,
  principalOf,
  type CreateJobInput,
  type JobAction,
  type ReportInput,
} from './farm.rules.js';
import { type FarmChunkRow, type FarmEventStamp, type FarmLease, type FarmStore } from './farm.ports.js';

export interface FarmServiceDeps {
  store: FarmStore;
  /**
   * Called with each event once its commit is done (the farm's statements build their events in
   * SQL and hand back what they wrote): records' bus topic `committed`, which wakes the outbox
   * relay like every other write (docs/architecture.md, "The write path and its events").
   */
  committed: (event: StreamEvent) => void;
}

export interface ClaimInput {
  pool: string;
  worker: string;
  kinds: string[];
  leaseSeconds?: number;
}

export interface Claimed {
  job: RecordView;
  chunk: FarmChunkRow;
  lease: string;
}

/** Claims in a row that may each fail an exhausted chunk before one hands a chunk out. */
const MAX_BURNS_PER_CLAIM = 20;

const chunkNotFound = (id: string) => AppError.notFound(`chunk ${id} not found`);
const leaseLost = (id: string) =>
  AppError.conflict('lease_lost', `the lease on chunk ${id} is not its current one (it ran out, was claimed again, or the job was cancelled)`);

export class FarmService {
  constructor(private readonly deps: FarmServiceDeps) {}

  /** POST /farm/jobs: the FarmJob record, its chunks and its create event in one transaction. */
  async create(input: CreateJobInput, ctx: CallContext): Promise<RecordView> {
    const principal = principalOf(ctx.principal);
    assertFarmWriter(principal, 'submit farm jobs');
    const checked = checkCreateJob(input);
    const id = newId();
    const createdBy = actorOf(principal);
    const status = 'queued';
    const draft: RecordView = {
      id,
      entityType: 'FarmJob',
      projectId: checked.projectId,
      status,
      active: true,
      thumbnailId: null,
      createdBy,
      createdAt: '',
      updatedAt: '',
      data: checked.data,
    };
    const event = this.event(draft, 'create', principal, createChanges(draft));
    const out = await this.deps.store.insertJob(
      {
        record: { id, entityType: 'FarmJob', projectId: checked.projectId, status, active: true, thumbnailId: null, createdBy, data: checked.data },
        pool: checked.pool,
        kind: checked.data.kind as string,
        priority: checked.priority,
        maxAttempts: checked.maxAttempts,
        manager: (checked.data.manager as string | undefined) ?? null,
        dependsOn: checked.dependsOn,
        chunks: checked.chunks,
        reader: membershipOf(principal),
      },
      event,
    );
    if ('refused' in out) {
      const { projectLive, projectHidden, badDependencies, badLinks } = out.refused;
      // A write into a project the submitter may not read answers as a read of it would (404).
      if (projectHidden) throw AppError.notFound(`Project ${checked.projectId} not found`);
      const problems = [];
      if (!projectLive) problems.push({ loc: ['project_id'], msg: `no live Project with id ${checked.projectId}`, type: 'link_not_found' });
      for (const i of badDependencies) {
        problems.push({ loc: ['depends_on', i], msg: `${checked.dependsOn[i]} is not a live FarmJob`, type: 'link_not_found' });
      }
      for (const f of badLinks) problems.push({ loc: [f], msg: `no live ${f === 'version_id' ? 'Version' : 'Task'} with this id`, type: 'link_not_found' });
      throw AppError.invalid(problems);
    }
    this.emitted({ ...event.payload, occurred_at: out.job.updatedAt });
    return toView(out.job);
  }

  /**
   * POST /farm/claim: one claim statement hands out the next due chunk. When the statement
   * instead failed a chunk whose expired lease used up its attempts (and so its job), the
   * claim is made again.
   */
  async claim(input: ClaimInput, ctx: CallContext): Promise<Claimed | undefined> {
    const principal = principalOf(ctx.principal);
    assertFarmWriter(principal, 'claim farm chunks');
    const problems = [];
    if (input.pool.trim() === '' || input.pool.length > LIMITS.text)
      problems.push({ loc: ['pool'], msg: `Input should have 1 to ${LIMITS.text} characters`, type: 'string_length' });
    if (input.worker.trim() === '' || input.worker.length > LIMITS.text)
      problems.push({ loc: ['worker'], msg: `Input should have 1 to ${LIMITS.text} characters`, type: 'string_length' });
    const leaseSeconds = input.leaseSeconds ?? LIMITS.leaseSeconds.default;
    if (!Number.isInteger(leaseSeconds) || leaseSeconds < LIMITS.leaseSeconds.min || leaseSeconds > LIMITS.leaseSeconds.max) {
      problems.push({
        loc: ['lease_seconds'],
        msg: `Input should be an integer from ${LIMITS.leaseSeconds.min} to ${LIMITS.leaseSeconds.max}`,
        type: 'int_range',
      });
    }
    if (problems.length) throw AppError.invalid(problems);
    assertAgentPool(principal, input.pool);
    const reader = membershipOf(principal);
    for (let i = 0; i < MAX_BURNS_PER_CLAIM; i += 1) {
      const lease = newLease();
      const out = await this.deps.store.claim(
        { pool: input.pool, kinds: input.kinds.length ? input.kinds : null, worker: input.worker, leaseSeconds, leaseDigest: lease.digest, reader },
        this.stamp(principal),
      );
      if (out.kind === 'none') return undefined;
      // Most claims change the chunk only: no event, so nothing for the outbox relay to publish.
      this.emitted(out.event);
      if (out.kind === 'given') return { job: toView(out.job), chunk: out.chunk, lease: lease.token };
    }
    return undefined;
  }

  /** POST /farm/chunks/{id}/heartbeat: extends the lease; progress is kept on the chunk, no event. */
  async heartbeat(chunkId: string, lease: string, progress: number | undefined, ctx: CallContext): Promise<FarmChunkRow> {
    const principal = principalOf(ctx.principal);
    assertFarmWriter(principal, 'work on farm chunks');
    if (progress !== undefined && (!Number.isInteger(progress) || progress < 0 || progress > 100)) {
      throw AppError.invalid([{ loc: ['progress'], msg: 'Input should be an integer from 0 to 100', type: 'int_range' }]);
    }
    const out = await this.leased(chunkId, lease, principal, (l) => this.deps.store.heartbeat(l, progress ?? null));
    return out.chunk;
  }

  /** POST /farm/chunks/{id}/complete: the output is kept compact, at most 64 KiB (422 `too_large`). */
  async complete(chunkId: string, lease: string, outputJson: string | undefined, ctx: CallContext): Promise<{ chunk: FarmChunkRow; job: RecordView }> {
    const principal = principalOf(ctx.principal);
    assertFarmWriter(principal, 'work on farm chunks');
    const output = checkOutput(outputJson);
    const out = await this.leased(chunkId, lease, principal, (l) => this.deps.store.complete(l, output, this.stamp(principal)));
    this.emitted(out.event);
    return { chunk: out.chunk, job: toView(out.job) };
  }

  /** POST /farm/chunks/{id}/fail: an attempt counted; queued again until max_attempts, then failed with the job. */
  async fail(chunkId: string, lease: string, error: string, ctx: CallContext): Promise<{ chunk: FarmChunkRow; job: RecordView }> {
    const principal = principalOf(ctx.principal);
    assertFarmWriter(principal, 'work on farm chunks');
    if (error.length === 0 || error.length > LIMITS.error) {
      throw AppError.invalid([{ loc: ['error'], msg: `Input should have 1 to ${LIMITS.error} characters`, type: 'string_length' }]);
    }
    const out = await this.leased(chunkId, lease, principal, (l) => this.deps.store.fail(l, error, this.stamp(principal)));
    this.emitted(out.event);
    return { chunk: out.chunk, job: toView(out.job) };
  }

  /** POST /farm/jobs/{id}/pause|resume|cancel|retry. */
  async change(jobId: string, action: JobAction, ctx: CallContext): Promise<RecordView> {
    const principal = principalOf(ctx.principal);
    if (!JOB_ACTIONS.includes(action)) throw AppError.notFound(`no job action ${String(action).slice(0, 40)}`);
    const job = await this.job(jobId, principal);
    assertJobManager(principal, job.createdBy);
    const changed = await this.deps.store.changeJob(
      job.id,
      (current) => {
        const status = nextStatus(action, current.record.status, current.everClaimed);
        return { status, requeueFailed: action === 'retry' };
      },
      this.stamp(principal),
    );
    this.emitted(changed.event);
    return toView(changed.record);
  }

  /** POST /farm/jobs/{id}/report: a bridge's report on a job an outside manager runs. */
  async report(jobId: string, input: ReportInput, ctx: CallContext): Promise<RecordView> {
    const principal = principalOf(ctx.principal);
    checkReport(input, null);
    const job = await this.job(jobId, principal);
    assertJobManager(principal, job.createdBy);
    const changed = await this.deps.store.changeJob(
      job.id,
      (current) => {
        if (current.manager === null)
          throw AppError.conflict('not_tracked', 'this job is run by the farm, not by an outside manager: only jobs with a manager take reports');
        return checkReport(input, current.record.status);
      },
      this.stamp(principal),
    );
    this.emitted(changed.event);
    return toView(changed.record);
  }

  /** GET /farm/jobs/{id}: any authenticated caller who may read the job's project. */
  async get(jobId: string, ctx: CallContext): Promise<RecordView> {
    return toView(await this.job(jobId, principalOf(ctx.principal)));
  }

  /**
   * GET /farm/jobs/{id}/chunks: any authenticated caller who may read the job's project; one page in
   * index order, at most `limit` chunks and about {@link CHUNK_PAGE_BYTES} (docs/farm.md, "Bounds").
   */
  async chunks(
    jobId: string,
    limit: number | undefined,
    cursor: string | undefined,
    ctx: CallContext,
  ): Promise<{ chunks: FarmChunkRow[]; nextCursor?: string }> {
    const page = checkChunkPage(limit, cursor);
    const job = await this.job(jobId, principalOf(ctx.principal));
    const out = await this.deps.store.listChunks(job.id, { ...page, maxBytes: CHUNK_PAGE_BYTES, fixedBytes: CHUNK_FIXED_BYTES });
    const last = out.chunks.at(-1);
    return out.more && last ? { chunks: out.chunks, nextCursor: encodeChunkCursor(last.index) } : { chunks: out.chunks };
  }

  /** Finalises expired leases (the sweeper; claims and reports do the same when they meet one). */
  async expireLeases(limit: number): Promise<number> {
    const out = await this.deps.store.expireLeases(limit, () => ({ eventId: newId(), actor: null }));
    for (const e of out.events) this.emitted(e);
    return out.expired;
  }

  /** The live FarmJob `jobId`; not found when retired or in a project `principal` may not read. */
  private async job(jobId: string, principal: Principal): Promise<StoredRecord> {
    const found = isUuid(jobId) ? await this.deps.store.findJob(jobId.toLowerCase(), membershipOf(principal)) : undefined;
    if (!found || found.record.retired || found.record.entityType !== 'FarmJob') throw AppError.notFound(`FarmJob ${jobId} not found`);
    return found.record;
  }

  /**
   * Runs a lease-holding call: 404 for an unknown chunk or one of a job in a project `principal`
   * may not read, 409 `lease_lost` for any other lease.
   */
  private async leased<T extends object>(
    chunkId: string,
    lease: string,
    principal: Principal,
    call: (l: FarmLease) => Promise<T | 'not_found' | 'lease_lost'>,
  ): Promise<T> {
    if (!isUuid(chunkId)) throw chunkNotFound(chunkId);
    const out = await call({ chunkId: chunkId.toLowerCase(), leaseDigest: leaseDigest(lease), reader: membershipOf(principal) });
    if (out === 'not_found') throw chunkNotFound(chunkId);
    if (out === 'lease_lost') throw leaseLost(chunkId);
    return out;
  }

  private stamp(principal: Principal): FarmEventStamp {
    return { eventId: newId(), actor: actorOf(principal) };
  }

  private event(record: RecordView, action: 'create', principal: Principal, changes: Record<string, unknown>): OutboxEvent {
    const payload = buildEventPayload({ eventId: newId(), record, action, principal, changes, occurredAt: record.updatedAt });
    return { payload, json: encodeStreamEvent(payload) };
  }

  /** Hands a committed event to the service's bus (nothing when the statement wrote none). */
  private emitted(event: StreamEvent | null): void {
    if (event) this.deps.committed(event);
  }
}
