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
}

export interface RecordStore {
  /** The row with `id`, retired or not (no lock). */
  find(id: string): Promise<StoredRecord | undefined>;
  /**
   * Creates a live record and its outbox event atomically. The event's `occurred_at` is set
   * to the record's `updated_at`. Nothing is written when `record.projectId` is set and names
   * no live Project, or when `guard` does not hold; the result then says why.
   */
  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard): Promise<InsertResult>;
  /** The stored schema version (0 before the first snapshot). */
  schemaVersion(): Promise<number>;
  /** The links that name no live record of their type (one statement for all of them). */
  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]>;
  /** As RecordTransaction.linksOutsideProject, outside a transaction. */
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
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

/** Strips the retired flag for callers. */
export function toView(r: StoredRecord): RecordView {
  const { retired: _retired, ...view } = r;
  return view;
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
  values: RecordValues;
}

/** The statements of one sync import transaction; store/sync.repository.ts. */
export interface SyncTransaction {
  /** Serialises the imports of one source (so two cannot create the same mapping). */
  lockSource(source: string): Promise<void>;
  /** As RecordTransaction.schemaVersion (under the shared schema lock). */
  schemaVersion(): Promise<number>;
  loadSchema(): Promise<StoredSchema | undefined>;
  /** The mappings of `source` among `keys` (one statement). */
  mapped(source: string, keys: readonly { entityType: string; externalId: string }[]): Promise<SyncMapping[]>;
  /** The rows with these ids, locked for update (one statement). */
  lockMany(ids: readonly string[]): Promise<StoredRecord[]>;
  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]>;
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]>;
  /**
   * Inserts the records with their outbox events (each event's `occurred_at` = its row's `updated_at`)
   * and remembers each write as `source`'s, in one statement; rows in input order.
   */
  insertMany(source: string, records: readonly NewRecord[], events: readonly OutboxEvent[]): Promise<StoredRecord[]>;
  /** As insertMany for updates (`updated_at` moves strictly forward per row); rows in input order. */
  updateMany(source: string, updates: readonly SyncUpdate[], events: readonly OutboxEvent[]): Promise<StoredRecord[]>;
  addMappings(mappings: readonly SyncMapping[]): Promise<void>;
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
}
