/**
 * What sync needs from storage (docs/api-notes.md, "Sync"); store/sync.repository.ts.
 */
import type { NewRecord, OutboxEvent, RecordValues, StoredRecord, StoredSchema } from '../../kernel/domain/record.ports.js';
import type { LinkRef } from '../../kernel/domain/schema.validator.js';

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
  /**
   * Mappings by `id`, or by source with optional type and external id (at most `limit`), of records
   * `reader` may read (membershipOf's user id; null: every record).
   */
  findMappings(q: { source?: string; entityType?: string; externalId?: string; id?: string }, limit: number, reader: string | null): Promise<SyncMapping[]>;
  /** Every mapping of the records `ids`. */
  mappingsOf(ids: readonly string[]): Promise<SyncMapping[]>;
  /** The rows with these ids, retired or not, that `reader` may read (null: every row). */
  findMany(ids: readonly string[], reader: string | null): Promise<StoredRecord[]>;
  /** Of `writes` (record id and the `updated_at` it got), the indexes written by `source`'s imports. */
  echoes(source: string, writes: readonly { id: string; at: string }[]): Promise<Set<number>>;
  /** The entity type renames records applied, oldest first (`from` → `to`). */
  typeRenames(): Promise<{ from: string; to: string }[]>;
}
