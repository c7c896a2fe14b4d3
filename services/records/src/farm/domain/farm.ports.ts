/**
 * What the render farm needs from storage (docs/farm.md); store/farm.repository.ts.
 */
import type { StreamEvent } from '@reelbase/lib-platform';
import type { DataObject } from '../../kernel/domain/record.types.js';
import type { NewRecord, OutboxEvent, StoredRecord } from '../../kernel/domain/record.ports.js';

/** A chunk of a farm job as stored (docs/farm.md). */
export interface FarmChunkRow {
  id: string;
  jobId: string;
  index: number;
  frames: string | null;
  state: 'queued' | 'leased' | 'done' | 'failed';
  /** Attempts counted so far (failed or expired leases). */
  attempts: number;
  /** Times the chunk was handed out. */
  claims: number;
  leaseExpiresAt: string | null;
  progress: number | null;
  worker: string | null;
  error: string | null;
  output: unknown;
}

/** A FarmJob record and the farm's row beside it. */
export interface FarmJobState {
  record: StoredRecord;
  everClaimed: boolean;
  manager: string | null;
}

/** A job to create: its record, the claim fields copied onto its chunks, its chunks' frames. */
export interface NewFarmJob {
  record: NewRecord;
  pool: string;
  kind: string;
  priority: number;
  maxAttempts: number;
  manager: string | null;
  dependsOn: readonly string[];
  /** One entry per chunk, in index order. */
  chunks: readonly (string | null)[];
  /** The submitter's membership (kernel/domain/project.readers.ts): its hidden project and records count as absent. */
  reader: string | null;
}

/** Why a job was not created. */
export interface FarmJobRefusal {
  projectLive: boolean;
  /** The project is live but the submitter may not read it: 404, as if it did not exist. */
  projectHidden: boolean;
  /** Indexes into `dependsOn` that name no live FarmJob. */
  badDependencies: number[];
  /** `version_id` / `task_id` naming no live Version / Task. */
  badLinks: ('version_id' | 'task_id')[];
}

/**
 * Who an event of a farm statement names and its id: the store builds the rest (the FarmJob,
 * its project, the changes and when) in the statement that changes the job.
 */
export interface FarmEventStamp {
  eventId: string;
  actor: string | null;
}

export interface FarmClaimInput {
  pool: string;
  /** Null: any kind. */
  kinds: readonly string[] | null;
  worker: string;
  leaseSeconds: number;
  /** SHA-256 of the lease token handed to the agent. */
  leaseDigest: Buffer;
  /**
   * The user whose membership decides which projects' chunks may be handed out (membershipOf,
   * kernel/domain/project.readers.ts); null: every project's.
   */
  reader: string | null;
}

/** The outcome of one claim statement. */
export type FarmClaimOutcome =
  | { kind: 'none' }
  /** An expired chunk whose attempts ran out was failed (and its job) instead of being handed out. */
  | { kind: 'burned'; event: StreamEvent | null }
  /** `event`: the claim changed the job too (its first claim, an attempt counted) and wrote this event. */
  | { kind: 'given'; job: StoredRecord; chunk: FarmChunkRow; event: StreamEvent | null };

/** A chunk's lease as presented by an agent. */
export interface FarmLease {
  chunkId: string;
  leaseDigest: Buffer;
  /** As FarmClaimInput's: a chunk of a job in a project this user may not read is not found; null: none is hidden. */
  reader: string | null;
}

/** The outcome of a lease-holding call: the chunk (and its job, and the job's event when it wrote one), or why not. */
export type FarmLeaseOutcome = { chunk: FarmChunkRow; job: StoredRecord; event: StreamEvent | null } | 'not_found' | 'lease_lost';

/** The job-level change a rule decided (pause, resume, cancel, retry, report). */
export interface FarmJobChange {
  status: string;
  /** Data fields to set (report). */
  data?: DataObject;
  /** Retry: failed chunks queued again with fresh attempts, `chunks_failed` back to 0. */
  requeueFailed?: boolean;
}

/** What the farm needs from storage; store/farm.repository.ts. */
export interface FarmStore {
  /** The job, chunks and the create event in one transaction; a refusal when a reference is not live. */
  insertJob(job: NewFarmJob, event: OutboxEvent): Promise<{ job: StoredRecord } | { refused: FarmJobRefusal }>;
  /**
   * The job with `id` (a FarmJob record, retired or not), with its farm row; undefined when there is
   * none, or when `reader` (membershipOf's user id; null: every project) may not read its project.
   */
  findJob(id: string, reader: string | null): Promise<FarmJobState | undefined>;
  /** One claim statement: the next due chunk under a new lease, or nothing. */
  claim(input: FarmClaimInput, stamp: FarmEventStamp): Promise<FarmClaimOutcome>;
  /** Extends a live lease by its claim's lease_seconds; `progress` kept on the chunk only. */
  heartbeat(lease: FarmLease, progress: number | null): Promise<FarmLeaseOutcome>;
  complete(lease: FarmLease, outputJson: string | null, stamp: FarmEventStamp): Promise<FarmLeaseOutcome>;
  fail(lease: FarmLease, error: string, stamp: FarmEventStamp): Promise<FarmLeaseOutcome>;
  /**
   * Locks the job, asks `decide` for the change (it throws to refuse) and applies it with its
   * event in one transaction (no event when nothing changed).
   */
  changeJob(id: string, decide: (job: FarmJobState) => FarmJobChange, stamp: FarmEventStamp): Promise<{ record: StoredRecord; event: StreamEvent | null }>;
  /** Finalises up to `limit` expired leases (each counted as an attempt); how many, and the events written. */
  expireLeases(limit: number, stamp: () => FarmEventStamp): Promise<{ expired: number; events: StreamEvent[] }>;
  /** One page of a job's chunks in index order (docs/farm.md, "Bounds"). */
  listChunks(jobId: string, page: FarmChunkPage): Promise<{ chunks: FarmChunkRow[]; more: boolean }>;
}

/**
 * A page of chunks: those after index `afterIndex`, at most `limit`, ending with the first chunk
 * whose size (`fixedBytes` plus the UTF-8 bytes of its frames, error, worker and output) brings
 * the page to `maxBytes`.
 */
export interface FarmChunkPage {
  afterIndex: number;
  limit: number;
  maxBytes: number;
  fixedBytes: number;
}
