/**
 * What the core module (records, queries, notes and views, summaries, schema administration)
 * needs from storage, and the data those ports carry. The domain decides what must happen
 * atomically; the store owns transactions, SQL, locking, the outbox table (and so the NATS subject
 * each event is published on) and the mapping of database failures to AppErrors (a reused id →
 * 409 `duplicate_id`, a lost database → `unavailable`). The PostgreSQL adapter is
 * store/knex.record.store.ts.
 *
 * A `reader` is the user whose membership decides what a caller may read (membershipOf of
 * kernel/domain/project.readers.ts): a record in a project they may not read is to them as if it did
 * not exist (docs/api-notes.md, "Restricted projects"). Null or absent: the caller reads everything,
 * and the statement is the one it always was.
 */
import type { RestrictedProject } from '../../kernel/domain/project.readers.js';
import type { DataObject } from '../../kernel/domain/record.types.js';
import type {
  IdempotencyClaim,
  NewRecord,
  OutboxEvent,
  ProjectState,
  RecordValues,
  StoredRecord,
  StoredSchema,
  WriteGuard,
} from '../../kernel/domain/record.ports.js';
import type { StoredAnswer } from '../../kernel/domain/idempotency.types.js';
import type { LinkRef } from '../../kernel/domain/schema.validator.js';
import type { CodeRename } from './schema.rename.js';

/** A create's outcome: the row, or why nothing was written. */
export type InsertResult =
  | { row: StoredRecord }
  | {
      row: undefined;
      /** The stored schema version now: when it differs from the guard's, validate again. */
      schemaVersion: number;
      projectLive: boolean;
      /** The project is live but the guard's reader may not read it (a 404, not a missing project's 422). */
      projectHidden?: boolean;
      /** The guard's links that name no live record of their type (or none the guard's reader may read). */
      deadLinks: LinkRef[];
    };

/** The statements of one write transaction; row locks taken here hold until it ends. */
export interface RecordTransaction {
  /** The row with `id`, retired or not, locked against concurrent writes (none when `reader` may not read it). */
  findForUpdate(id: string, reader?: string | null): Promise<StoredRecord | undefined>;
  /**
   * As findForUpdate, in the same statement reading the stored schema version (-1 when there
   * is no such row).
   */
  lockForWrite(id: string, reader?: string | null): Promise<{ record: StoredRecord | undefined; schemaVersion: number }>;
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
  /** The links that name no live record of their type, or none `reader` may read (one statement for all of them). */
  deadLinks(links: readonly LinkRef[], reader?: string | null): Promise<LinkRef[]>;
  /**
   * As RecordStore.insertWithEvent without a guard, inside this transaction; with `idempotency` the
   * statement stores the claimed key's answer (this record) too.
   */
  insertWithEvent(record: NewRecord, event: OutboxEvent, idempotency?: IdempotencyClaim): Promise<StoredRecord | undefined>;
  /** Overwrites the writable columns and moves `updated_at` (strictly later than before). */
  update(id: string, values: RecordValues): Promise<StoredRecord>;
  /** Retires or revives the row; either moves `updated_at`. */
  setRetired(id: string, retired: boolean): Promise<StoredRecord>;
  /** Whether `id` is a live Project `reader` may read ('live': it stays live until the transaction ends), a hidden one, or none. */
  projectState(id: string, reader?: string | null): Promise<ProjectState>;
  /** The links whose live target (one `reader` may read) belongs to another project than `projectId` (one statement). */
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null, reader?: string | null): Promise<LinkRef[]>;
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
  /**
   * Stores the answer of a claimed Idempotency-Key in this transaction, so it commits with the write
   * (false when the claim no longer holds the key: its lease ran out and another took it over).
   */
  storeAnswer(key: IdempotencyClaim, answer: StoredAnswer): Promise<boolean>;
}

export interface RecordStore {
  /** The row with `id`, retired or not (no lock); none when `reader` may not read it. */
  find(id: string, reader?: string | null): Promise<StoredRecord | undefined>;
  /**
   * Creates a live record and its outbox event atomically. The event's `occurred_at` is set
   * to the record's `updated_at`. Nothing is written when `record.projectId` is set and names
   * no live Project (or one the guard's reader may not read), or when `guard` does not hold; the
   * result then says why.
   */
  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard, idempotency?: IdempotencyClaim): Promise<InsertResult>;
  /** The stored schema version (0 before the first snapshot). */
  schemaVersion(): Promise<number>;
  /** The links that name no live record of their type, or none `reader` may read (one statement for all of them). */
  deadLinks(links: readonly LinkRef[], reader?: string | null): Promise<LinkRef[]>;
  /** As RecordTransaction.linksOutsideProject, outside a transaction. */
  linksOutsideProject(links: readonly LinkRef[], projectId: string | null, reader?: string | null): Promise<LinkRef[]>;
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
  /** The row with `id`, retired or not; none when `reader` may not read it. */
  find(id: string, reader?: string | null): Promise<StoredRecord | undefined>;
  /** Live Notes whose `data.links` contain `{type, id}`, oldest first (those `reader` may read). */
  notesLinking(type: string, id: string, reader?: string | null): Promise<StoredRecord[]>;
  /** Live Tasks whose `data.assignees` contain the User `userId`, oldest first (those `reader` may read). */
  tasksAssignedTo(userId: string, reader?: string | null): Promise<StoredRecord[]>;
  /** Live TimeLogs whose `data.user` is `userId` and `data.date` lies in [from, to], by date then creation (those `reader` may read). */
  timeLogsOf(userId: string, from: string, to: string, reader?: string | null): Promise<StoredRecord[]>;
  /** Every restricted project, retired or not, with its member ids. */
  restrictedProjects(): Promise<RestrictedProject[]>;
}

/**
 * The reader rule's SQL (kernel/store/project.readers.sql.ts) for the statements the domain writes
 * itself (queries and summaries): `probe` is the placeholder (`$n`) the membership probe is bound at.
 */
export interface ReaderSql {
  /** True for a row of `alias` (records.record) the caller may read. */
  readable(alias: string, probe: string): string;
  /** True when the project id given as SQL may be read (null: studio-wide). */
  projectReadable(projectIdSql: string, probe: string): string;
}

/** What queries need from storage: the plan run on the query pool, and the schema. */
export interface RecordQueryStore {
  /** The reader rule the plan of a caller who may not read every project carries. */
  readonly readers: ReaderSql;
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

/** The statement a query runs: `select <record with data>, <keys> from records.record r where <where> order by <orderBy> limit <limit>`. */
export interface QueryPlan {
  where: string;
  /** The SQL of the `data` answered: `r.data`, or only the keys `fields` asked for. */
  data: string;
  /** The parameters of `data`, numbered after `params`. */
  dataParams: unknown[];
  params: unknown[];
  /** SQL expressions whose text values make the cursor, in order. */
  keys: string[];
  orderBy: string;
  limit: number;
  includeTotal: boolean;
  /**
   * Link hops run innermost-first (filter.compiler.ts, LinkHopOptions): the materialized CTEs the
   * statement starts with, the SQL that is true when one of their id sets passed the cap, and the
   * plan to run instead when it did (every hop as EXISTS; same order and cursor keys).
   */
  ctes?: string[];
  overCap?: string;
  /** The CTE whose id set holds every match (CompiledFilter.driver): the page starts from it. */
  driver?: string;
  /**
   * The membership probe of a plan that carries the reader rule (bound as `$2`) and has no link
   * hops: the store may then walk the page project by project over the few projects the caller
   * reads (store/query.repository.ts, "Readable projects first").
   */
  readerProbe?: string;
  /** With `readerProbe`: `where` without the queried row's own reader condition (its filter paths keep theirs). */
  unscopedWhere?: string;
  fallback?: QueryPlan;
}

/** A row of a query: the record in its client form as JSON text, and the text of its order keys. */
export interface QueryRow {
  json: string;
  keys: (string | null)[];
}

/** `GET /schema/usage`: records using each code, retired ones included. */
export interface SchemaUsage {
  entity_types: Record<string, number>;
  fields: Record<string, number>;
  statuses: Record<string, number>;
  steps: Record<string, number>;
  priorities: Record<string, number>;
}

/** {@link SchemaUsage} with options (`<Type>.<field>.<option>`) and statuses per type (`<Type>.<status>`). */
export type CodeUsage = SchemaUsage & { options: Record<string, number>; status_types: Record<string, number> };

/**
 * One code a snapshot removes: what it is, how it is named in messages, its key in {@link CodeUsage},
 * and its parts (`[type]`, `[type, field]`, `[type, field, option]`, `[status]`, `[type, status]`,
 * `[step]`, `[priority]`) for the store to count it by.
 */
export interface Removal {
  what: 'entity type' | 'field' | 'option' | 'status' | 'step' | 'priority';
  code: string;
  kind: keyof CodeUsage;
  key: string;
  parts: string[];
  /** An option of a multi_enum field (held in an array), not of an enum. */
  multi?: boolean;
}

/** One statement and its bound parameters. */
export interface SummaryStatement {
  sql: string;
  params: unknown[];
}

/** One row of the statement: `g` the GROUPING bitmask, `k<i>`/`t<i>` the level keys, `a<j>` the summaries. */
export type SummaryRow = Record<string, unknown>;

export interface SummaryStore {
  /** The reader rule the statement of a caller who may not read every project carries. */
  readonly readers: ReaderSql;
  summarize(statement: SummaryStatement): Promise<SummaryRow[]>;
  /** The code (else name) of each live or retired record of `ids` (of those `reader` may read). */
  namesOf(ids: readonly string[], reader?: string | null): Promise<Map<string, string | null>>;
  loadSchema(): Promise<StoredSchema | undefined>;
  schemaVersion(): Promise<number>;
}
