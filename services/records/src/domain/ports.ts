/**
 * What the records domain needs from outside, as ports: the record store (writes and their
 * transactions), the schema it validates against, the work views, queries and share links. The
 * domain decides what must happen atomically; the store owns transactions, SQL, locking, the outbox
 * table (and so the NATS subject each event is published on) and the mapping of database failures
 * to AppErrors (a reused id → 409 `duplicate_id`, a lost database → `unavailable`). The PostgreSQL
 * adapter is store/knex.record.store.ts.
 */
import type { StreamEvent } from '@reelbase/lib-platform';
import type { QueryPlan, QueryRow } from './record.query.js';
import type { DataObject, RecordView } from './record.types.js';
import type { SchemaUsage } from './schema.admin.js';
import type { CodeUsage, Removal } from './schema.removals.js';
import type { CodeRename } from './schema.rename.js';
import type { SchemaSnapshot } from './schema.snapshot.js';
import type { LinkRef } from './schema.validator.js';
import type { NewShareLink, ShareLinkRow } from './share.links.js';
import type { Site, SiteKind, SiteState, StateFilter, StateKey, StatusCounts } from './sitesync/sitesync.types.js';

/** The schema records holds in its own table: version 0 and no snapshot until one is applied. */
export interface StoredSchema {
  version: number;
  snapshot: SchemaSnapshot;
}

/** A row as read for a write: the view plus whether it is retired. */
export interface StoredRecord extends RecordView {
  retired: boolean;
}

/** The values a write sets. */
export interface RecordValues {
  projectId: string | null;
  status: string | null;
  active: boolean;
  thumbnailId: string | null;
  data: DataObject;
}

/** A record to create: its identity plus its values. */
export interface NewRecord extends RecordValues {
  id: string;
  entityType: string;
  createdBy: string | null;
}

/** A claimed idempotency key whose answer a create stores with its record (docs/api-notes.md, "Idempotent retries"). */
export interface IdempotencyClaim {
  scope: string;
  claim: string;
}

/** An event for the outbox: `json` is `payload` encoded once (its size was checked from it). */
export interface OutboxEvent {
  payload: StreamEvent;
  json: string;
}

/**
 * What a create was validated against: it is written only when the stored schema is still
 * `schemaVersion` and every link names a live record of the linked type.
 */
export interface WriteGuard {
  schemaVersion: number;
  links: readonly LinkRef[];
}

/** A create's outcome: the row, or why nothing was written. */
export type InsertResult =
  | { row: StoredRecord }
  | {
      row: undefined;
      /** The stored schema version now: when it differs from the guard's, validate again. */
      schemaVersion: number;
      projectLive: boolean;
      /** The guard's links that name no live record of their type. */
      deadLinks: LinkRef[];
    };

/** The statements of one write transaction; row locks taken here hold until it ends. */
export interface RecordTransaction {
  /** The row with `id`, retired or not, locked against concurrent writes. */
  findForUpdate(id: string): Promise<StoredRecord | undefined>;
  /**
   * As findForUpdate, in the same statement reading the stored schema version (-1 when there
   * is no such row).
   */
  lockForWrite(id: string): Promise<{ record: StoredRecord | undefined; schemaVersion: number }>;
  /**
   * Locks the rows with these ids against concurrent writes, in id order, under the shared schema lock
   * (as lockForWrite takes it): a transaction that will write several existing records locks them all
   * first, so two such transactions never hold one each while waiting for the other's.
   */
  lockRecords(ids: readonly string[]): Promise<void>;
  /** The stored schema version (0 before the first snapshot). */
  schemaVersion(): Promise<number>;
  /** The stored schema, read in this transaction. */
  loadSchema(): Promise<StoredSchema | undefined>;
  /** The links that name no live record of their type (one statement for all of them). */
  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]>;
  /** As RecordStore.insertWithEvent without a guard, inside this transaction. */
  insertWithEvent(record: NewRecord, event: OutboxEvent): Promise<StoredRecord | undefined>;
  /** Overwrites the writable columns and moves `updated_at` (strictly later than before). */
  update(id: string, values: RecordValues): Promise<StoredRecord>;
  /** Retires or revives the row; either moves `updated_at`. */
  setRetired(id: string, retired: boolean): Promise<StoredRecord>;
  /** True when `id` is a live Project; it stays live until the transaction ends. */
  isLiveProject(id: string): Promise<boolean>;
  /** The links whose live target belongs to another project than `projectId` (one statement). */
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]>;
  /** True when the Playlist `playlistId` has a share link that is neither revoked nor expired. */
  hasLiveShareLink(playlistId: string): Promise<boolean>;
  /** Adds the event to the outbox; it is published after the commit. */
  appendEvent(event: OutboxEvent): Promise<void>;
  /** As insertWithEvent without the outbox row (a batch's create; its events are appended by appendBatch). */
  insertRecord(record: NewRecord): Promise<StoredRecord | undefined>;
  /**
   * Adds a batch's events to the outbox as ONE row, published as one message, so the log
   * appends them consecutively (docs/architecture.md, "Batches").
   */
  appendBatch(batchId: string, events: readonly OutboxEvent[]): Promise<void>;
}

export interface RecordStore {
  /** The row with `id`, retired or not (no lock). */
  find(id: string): Promise<StoredRecord | undefined>;
  /**
   * Creates a live record and its outbox event atomically. The event's `occurred_at` is set
   * to the record's `updated_at`. Nothing is written when `record.projectId` is set and names
   * no live Project, or when `guard` does not hold; the result then says why.
   */
  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard, idempotency?: IdempotencyClaim): Promise<InsertResult>;
  /** The stored schema version (0 before the first snapshot). */
  schemaVersion(): Promise<number>;
  /** The links that name no live record of their type (one statement for all of them). */
  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]>;
  /** As RecordTransaction.linksOutsideProject, outside a transaction. */
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. A transaction
   * PostgreSQL aborts for colliding with another (a deadlock, a serialization failure) runs once more
   * (so `fn` must do nothing outside it); a second collision is 409 `concurrent_change`.
   */
  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T>;
  /** The stored schema snapshot, undefined before the first ApplySchema. */
  loadSchema(): Promise<StoredSchema | undefined>;
  /**
   * Stores `snapshotJson` as version `version` when that is newer than the stored one; true when stored.
   * With `refuse`: under the lock record writes take in shared mode, `refuse` sees the stored snapshot
   * and a way to count usage, and stops the change by throwing.
   */
  applySchema(version: number, snapshotJson: string, refuse?: SchemaGuard): Promise<boolean>;
}

/**
 * Checks a snapshot change under the schema lock (see {@link RecordStore.applySchema}); `countRemoved`
 * counts the usage of the given codes only.
 */
export type SchemaGuard = (held: StoredSchema | undefined, countRemoved: (removed: readonly Removal[]) => Promise<CodeUsage>) => Promise<void>;

/** The reads the views need; the PostgreSQL implementation is store/views.repository.ts via KnexRecordStore. */
export interface RecordViewStore {
  /** The row with `id`, retired or not. */
  find(id: string): Promise<StoredRecord | undefined>;
  /** Live Notes whose `data.links` contain `{type, id}`, oldest first. */
  notesLinking(type: string, id: string): Promise<StoredRecord[]>;
  /** Live Tasks whose `data.assignees` contain the User `userId`, oldest first. */
  tasksAssignedTo(userId: string): Promise<StoredRecord[]>;
  /** Live TimeLogs whose `data.user` is `userId` and `data.date` lies in [from, to], by date then creation. */
  timeLogsOf(userId: string, from: string, to: string): Promise<StoredRecord[]>;
}

/** What queries need from storage: the plan run on the query pool, and the schema. */
export interface RecordQueryStore {
  /**
   * Runs the plan: at most `limit` rows, the stored schema version the statement saw, and the
   * count of every match when asked.
   */
  query(plan: QueryPlan): Promise<{ rows: QueryRow[]; schemaVersion: number; total?: number }>;
  /** The stored schema snapshot, undefined before the first ApplySchema. */
  loadSchema(): Promise<StoredSchema | undefined>;
  /** The stored schema version (0 before the first snapshot). */
  schemaVersion(): Promise<number>;
}

/** What the schema service's calls need from storage. */
export interface SchemaAdminStore extends Pick<RecordStore, 'applySchema'> {
  /** Applies `rename` once per journal id; later calls answer the first call's count. */
  applyRename(rename: CodeRename): Promise<number>;
  countUsage(): Promise<SchemaUsage>;
}

/** What share links need from storage; store/share.repository.ts via KnexRecordStore. */
export interface ShareLinkStore {
  find(id: string): Promise<StoredRecord | undefined>;
  /** Live records among `ids` (any order). */
  findLive(ids: readonly string[]): Promise<StoredRecord[]>;
  /** Live Notes whose `links` name any of the records `type`/`ids`, oldest first. */
  notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]>;
  insertShareLink(link: NewShareLink): Promise<ShareLinkRow>;
  /** Links of a playlist, newest first. */
  shareLinksOf(playlistId: string): Promise<ShareLinkRow[]>;
  shareLinkByDigest(digest: Buffer): Promise<ShareLinkRow | undefined>;
  shareLinkById(id: string): Promise<ShareLinkRow | undefined>;
  /** Sets `revoked_at` once (a second revoke keeps the first time). */
  revokeShareLink(id: string): Promise<ShareLinkRow | undefined>;
}

/** A state as a claim or a lapse left it, and what happened to it (docs/sitesync.md). */
export interface MovedState {
  state: SiteState;
  /** Its lease had run out: it counted an attempt (and was queued again, failed, or claimed at once). */
  lapsed: boolean;
  /** When it lapsed: the agent whose lease ran out. */
  lapsedAgent: string | null;
  /** Claimed by this statement: the index of its lease among the digests handed in. */
  leaseIndex: number | null;
}

/** What a claim asks the store: one statement (store/sitesync.repository.ts). */
export interface ClaimInput {
  site: string;
  agent: string;
  /** One digest per state that may be claimed (at most `limit`), in claim order. */
  leaseDigests: readonly Buffer[];
  leaseSeconds: number;
  maxAttempts: number;
  /** Error kept on a state whose lease ran out. */
  lapseError: string;
}

/** A report's change, applied only while `leaseDigest` is the state's current, unexpired lease. */
export interface ReportChange {
  key: StateKey;
  leaseDigest: Buffer;
  status: 'in_progress' | 'synced' | 'failed';
  progress?: number;
  size?: number;
  totalSize?: number;
  error?: string;
  maxAttempts: number;
}

/** The statements of one site sync transaction; row locks hold until it ends. */
export interface SiteSyncTransaction {
  /** Creates the site or changes it; `changed` false (and nothing written) when it already held these values. */
  upsertSite(site: {
    id: string;
    code: string;
    name: string;
    kind: SiteKind;
    root: string | null;
  }): Promise<{ site: Site; created: boolean; changed: boolean }>;
  /** The site, locked for update (a delete), or key-shared (a request naming it), or undefined. */
  lockSite(code: string, mode: 'update' | 'share'): Promise<Site | undefined>;
  deleteSite(code: string): Promise<void>;
  /** States naming the site, whatever their status. */
  countStatesOf(site: string): Promise<number>;
  /** Live Representations among `ids` with their project, key-share locked until the end. */
  liveRepresentations(ids: readonly string[]): Promise<{ id: string; projectId: string | null }[]>;
  /**
   * Queues each representation on `site` that has no state there, or whose state is not one of
   * `keep` (fresh attempts, this priority); returns only the states it wrote.
   */
  requestStates(
    reps: readonly { id: string; projectId: string | null }[],
    site: string,
    priority: number,
    keep: readonly string[],
  ): Promise<{ state: SiteState; created: boolean }[]>;
  /** Claims up to `leaseDigests.length` states of the site in one statement (docs/sitesync.md, "The claim"). */
  claim(input: ClaimInput): Promise<MovedState[]>;
  /** Returns run-out leases to queued (or failed at the last attempt): of one state, or any (up to `limit`). */
  lapse(scope: { key: StateKey } | { limit: number }, maxAttempts: number, lapseError: string): Promise<SiteState[]>;
  /** Applies a report when its lease is current; undefined when it is not (or there is no state). */
  report(change: ReportChange): Promise<SiteState | undefined>;
  /** The state, locked for update. */
  findState(key: StateKey): Promise<SiteState | undefined>;
  /** Sets status and priority, ends any lease; `resetAttempts` for a manual retry. */
  setState(key: StateKey, status: string, priority: number, resetAttempts: boolean): Promise<SiteState>;
  /** Adds events to the records outbox; published after the commit. */
  appendEvents(events: readonly OutboxEvent[]): Promise<void>;
}

/** What site sync needs from storage; store/sitesync.repository.ts via KnexRecordStore. */
export interface SiteSyncStore {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  siteSyncTransaction<T>(fn: (tx: SiteSyncTransaction) => Promise<T>): Promise<T>;
  listSites(): Promise<Site[]>;
  findSite(code: string): Promise<Site | undefined>;
  findState(key: StateKey): Promise<SiteState | undefined>;
  /** At most `limit` states after `after` in (representation_id, site) order. */
  listStates(filter: StateFilter, after: StateKey | undefined, limit: number): Promise<SiteState[]>;
  countStates(filter: Pick<StateFilter, 'projectId' | 'site'>): Promise<StatusCounts>;
}

/** Strips the retired flag for callers. */
export function toView(r: StoredRecord): RecordView {
  const { retired: _retired, ...view } = r;
  return view;
}

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
}

/** Why a job was not created. */
export interface FarmJobRefusal {
  projectLive: boolean;
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
  /** The job with `id` (a FarmJob record, retired or not), with its farm row. */
  findJob(id: string): Promise<FarmJobState | undefined>;
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

/** One mapping of sync: a record known to another tracker (`source`) by `externalId` (docs/api-notes.md, "Sync"). */
export interface SyncMapping {
  source: string;
  entityType: string;
  externalId: string;
  id: string;
}

/** A record to overwrite in a sync import: its id and its new values. */
export interface SyncUpdate {
  id: string;
  /** The row's `updated_at` when the import read it: the update is written only if it is still so. */
  readAt: string;
  values: RecordValues;
}

/** A row an import read changed before the import wrote it: the import is planned again. */
export class StaleSyncRead extends Error {
  constructor(readonly ids: readonly string[]) {
    super(`${ids.length} record(s) changed while the import was planned`);
    this.name = 'StaleSyncRead';
  }
}

/** The statements of one sync import transaction; store/sync.repository.ts. */
export interface SyncTransaction {
  /** Serialises the imports of one source (so two cannot create the same mapping). */
  lockSource(source: string): Promise<void>;
  /** As RecordTransaction.schemaVersion (under the shared schema lock). */
  schemaVersion(): Promise<number>;
  loadSchema(): Promise<StoredSchema | undefined>;
  /**
   * The mappings of `source` among `keys` and, of the keys marked `own` (the batch's items), the mapped
   * records as stored, in one statement. The records are read without a lock: an unchanged item then
   * writes nothing, not even a row lock. The rows an import changes are checked again as they are
   * written (updateMany).
   */
  mapped(
    source: string,
    keys: readonly { entityType: string; externalId: string; own: boolean }[],
  ): Promise<{ mappings: SyncMapping[]; records: StoredRecord[] }>;
  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]>;
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]>;
  /**
   * Serialises the imports that write Users' login addresses (until the transaction ends) and answers
   * every User's stored `data.email`, retired Users' included.
   */
  lockUserEmails(): Promise<{ id: string; email: string }[]>;
  /**
   * Inserts the records with their outbox events (each event's `occurred_at` = its row's `updated_at`),
   * maps each to `source` and its external id (`externalIds`, in the order of `records`) and remembers
   * each write as `source`'s, in one statement. Answers each row's `updated_at` (ISO, as StoredRecord's),
   * in input order: nothing else of the rows is sent back.
   */
  insertMany(source: string, records: readonly NewRecord[], events: readonly OutboxEvent[], externalIds: readonly string[]): Promise<string[]>;
  /**
   * As insertMany for updates (`updated_at` moves strictly forward per row); rows in input order. Writes
   * only when every row still has its `readAt`; otherwise writes nothing and throws StaleSyncRead.
   */
  updateMany(source: string, updates: readonly SyncUpdate[], events: readonly OutboxEvent[]): Promise<string[]>;
}

/** What sync needs from storage. */
export interface SyncStore {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  syncTransaction<T>(fn: (tx: SyncTransaction) => Promise<T>): Promise<T>;
  /** Mappings by `id`, or by source with optional type and external id (at most `limit`). */
  findMappings(q: { source?: string; entityType?: string; externalId?: string; id?: string }, limit: number): Promise<SyncMapping[]>;
  /** Every mapping of the records `ids`. */
  mappingsOf(ids: readonly string[]): Promise<SyncMapping[]>;
  /** The rows with these ids, retired or not. */
  findMany(ids: readonly string[]): Promise<StoredRecord[]>;
  /** Of `writes` (record id and the `updated_at` it got), the indexes written by `source`'s imports. */
  echoes(source: string, writes: readonly { id: string; at: string }[]): Promise<Set<number>>;
  /** The entity type renames records applied, oldest first (`from` → `to`). */
  typeRenames(): Promise<{ from: string; to: string }[]>;
}
