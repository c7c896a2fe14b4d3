/**
 * The core module's adapter on PostgreSQL: implements the ports of core.ports.ts with Knex
 * transactions around the statements of the repositories beside it, each bound to the pool or to
 * one transaction when it is built. Every public method runs inside `guarded` (every database
 * failure mapped once); it names the subject each outbox row is published on.
 */
import { membershipProbe, type RestrictedProject } from '../../kernel/domain/project.readers.js';
import { projectReadableSql, readableSql } from '../../kernel/store/project.readers.sql.js';
import type { Knex } from '@mikro-orm/postgresql';
import { AppError, encodeStreamBatch, guarded, queryText, textQueries, type NatsNames, type SqlStateErrors } from '@reelbase/lib-platform';
import type { RecordsPools } from '../../kernel/store/knex.db.js';
import type { IdempotencyClaim, NewRecord, OutboxEvent, StoredRecord, StoredSchema } from '../../kernel/domain/record.ports.js';
import { GroupCommit } from './group.commit.js';
import { OutboxRepository, outboxRow } from '../../kernel/store/outbox.repository.js';
import { hasLiveShareLink } from './share.guard.js';
import { RecordRepository } from '../../kernel/store/record.repository.js';
import { SchemaRepository } from '../../kernel/store/schema.repository.js';
import { storeAnswer } from '../../kernel/store/idempotency.statements.js';
import { RenameRepository } from './rename.repository.js';
import { UsageRepository, type RecordsUsage } from './usage.repository.js';
import { ViewsRepository } from './views.repository.js';
import { QueryRepository } from './query.repository.js';
import type { QueryGate } from './query.pool.js';
import type { CodeRename } from '../domain/schema.rename.js';
import type { LinkRef } from '../../kernel/domain/schema.validator.js';
import type {
  InsertResult,
  QueryPlan,
  QueryRow,
  RecordQueryStore,
  RecordStore,
  RecordTransaction,
  RecordViewStore,
  SchemaAdminStore,
  ReaderSql,
  SchemaGuard,
  SummaryRow,
  SummaryStatement,
  SummaryStore,
} from '../domain/core.ports.js';
import type { WriteGuard } from '../../kernel/domain/record.ports.js';

/** A reused record id (only services choose ids) is a conflict, not a server failure. */
const WRITE_ERRORS: SqlStateErrors = {
  '23505': () => AppError.conflict('duplicate_id', 'a record with this id already exists'),
};

/**
 * SQLSTATEs of a transaction PostgreSQL aborted because it collided with another: a deadlock, a
 * serialization failure. Nothing of it was written; it runs once more, then the caller is told to.
 */
const COLLISIONS: readonly string[] = ['40P01', '40001'];
const collided = (err: unknown) =>
  new AppError('conflict', 'this write collided twice with another writing the same records (PostgreSQL aborted it); nothing was written: send it again', {
    code: 'concurrent_change',
    cause: err,
  });
const TRANSACTION_ERRORS: SqlStateErrors = { ...WRITE_ERRORS, ...Object.fromEntries(COLLISIONS.map((code) => [code, collided])) };
const collision = (err: unknown) => COLLISIONS.includes(String((err as { code?: unknown })?.code));

export class KnexRecordStore implements RecordStore, SchemaAdminStore, RecordViewStore, RecordQueryStore, SummaryStore {
  /** Writes, on the writes pool. */
  private readonly records: RecordRepository;
  /** Short reads of records and the schema, on the reads pool. */
  private readonly reads: RecordRepository;
  private readonly readSchema: SchemaRepository;
  private readonly outbox = new OutboxRepository();
  private readonly usage: UsageRepository;
  private readonly views: ViewsRepository;
  private readonly queries: QueryRepository;
  private readonly group: GroupCommit;
  private readonly db: Knex;
  /** The reader rule, for the plans and summaries the domain writes (core.ports.ts, ReaderSql). */
  readonly readers: ReaderSql = { readable: readableSql, projectReadable: projectReadableSql };

  constructor(
    pools: RecordsPools,
    private readonly names: NatsNames,
    /**
     * The pool queries run on, the statement_timeout its connections carry, and the gate
     * summaries pass on it (store/query.pool.ts); without a gate, summaries are not held back.
     */
    private readonly queryPool: { db: Knex; timeoutMs: number; summaries?: QueryGate },
  ) {
    this.db = pools.writes;
    this.records = new RecordRepository(pools.writes);
    this.reads = new RecordRepository(pools.reads);
    this.readSchema = new SchemaRepository(pools.reads);
    this.usage = new UsageRepository(pools.writes);
    this.views = new ViewsRepository(pools.reads);
    this.queries = new QueryRepository(textQueries(queryPool.db));
    this.group = new GroupCommit(pools.writes, this.records);
  }

  find(id: string, reader?: string | null): Promise<StoredRecord | undefined> {
    return guarded(() => this.reads.find(id, false, reader));
  }

  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard, idempotency?: IdempotencyClaim): Promise<InsertResult> {
    return guarded(async () => {
      // A create without an idempotency key goes with the next group commit (group.commit.ts).
      const row =
        idempotency === undefined
          ? await this.group.insert(record, outboxRow(this.names, event), guard)
          : await this.records.insertWithEvent(record, outboxRow(this.names, event), guard, idempotency);
      if (row) return { row };
      return { row: undefined, ...(await this.records.whyNotInserted(record.projectId, guard.links, guard.reader)) };
    }, WRITE_ERRORS);
  }

  schemaVersion(): Promise<number> {
    return guarded(() => this.readSchema.version());
  }

  deadLinks(links: readonly LinkRef[], reader?: string | null): Promise<LinkRef[]> {
    return guarded(() => this.reads.deadLinks(links, reader));
  }

  linksOutsideProject(links: readonly LinkRef[], projectId: string | null, reader?: string | null): Promise<LinkRef[]> {
    return guarded(() => this.reads.linksOutsideProject(links, projectId, reader));
  }

  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T> {
    const run = () => this.db.transaction((trx) => fn(this.statements(trx)));
    return guarded(() => run().catch((err: unknown) => (collision(err) ? run() : Promise.reject(err))), TRANSACTION_ERRORS);
  }

  loadSchema(): Promise<StoredSchema | undefined> {
    return guarded(() => this.readSchema.load());
  }

  applySchema(version: number, snapshotJson: string, refuse?: SchemaGuard): Promise<boolean> {
    return guarded(() =>
      this.db.transaction((trx) =>
        new SchemaRepository(trx).apply(version, snapshotJson, refuse && ((held) => refuse(held, (removed) => new UsageRepository(trx).countRemoved(removed)))),
      ),
    );
  }

  applyRename(rename: CodeRename): Promise<number> {
    return guarded(() => this.db.transaction((trx) => new RenameRepository(trx).apply(rename)));
  }

  countUsage(): Promise<RecordsUsage> {
    return guarded(() => this.usage.count());
  }

  query(plan: QueryPlan): Promise<{ rows: QueryRow[]; schemaVersion: number; total?: number }> {
    const { timeoutMs } = this.queryPool;
    return guarded(() => this.queries.query(plan), {
      '57014': (err) =>
        new AppError('unavailable', `the query ran longer than ${timeoutMs} ms and was cancelled: narrow its filter or page with a smaller limit`, {
          code: 'query_timeout',
          cause: err,
        }),
    });
  }

  /** A summary's one statement, on the query pool (read-only, with its statement timeout), through the summaries' gate. */
  summarize(statement: SummaryStatement): Promise<SummaryRow[]> {
    const { timeoutMs, summaries } = this.queryPool;
    const run = () => queryText<SummaryRow>(this.queryPool.db, statement.sql, statement.params);
    return guarded(() => (summaries ? summaries.run(run) : run()), {
      '57014': (err) =>
        new AppError('unavailable', `the summary ran longer than ${timeoutMs} ms and was cancelled: narrow its filter`, { code: 'query_timeout', cause: err }),
    });
  }

  namesOf(ids: readonly string[], reader?: string | null): Promise<Map<string, string | null>> {
    // A record the reader may not read is never resolved: its group keeps the stored link, without a name.
    const probe = reader ? [membershipProbe(reader)] : [];
    return guarded(async () => {
      const rows = await queryText<{ id: string; name: string | null }>(
        this.queryPool.db,
        `select id::text, coalesce(nullif(data->>'code', ''), data->>'name') as name from records.record
          where id = any($1::uuid[])${probe.length ? ` and ${readableSql('record', '$2')}` : ''}`,
        [ids, ...probe],
      );
      return new Map(rows.map((r) => [r.id, r.name]));
    });
  }

  notesLinking(type: string, id: string, reader?: string | null): Promise<StoredRecord[]> {
    return guarded(() => this.views.notesLinking(type, id, reader));
  }

  tasksAssignedTo(userId: string, reader?: string | null): Promise<StoredRecord[]> {
    return guarded(() => this.views.tasksAssignedTo(userId, reader));
  }

  timeLogsOf(userId: string, from: string, to: string, reader?: string | null): Promise<StoredRecord[]> {
    return guarded(() => this.views.timeLogsOf(userId, from, to, reader));
  }

  restrictedProjects(): Promise<RestrictedProject[]> {
    return guarded(() => this.views.restrictedProjects());
  }

  /** The statements of one transaction: repositories bound to `trx` (a unit of work). */
  private statements(trx: Knex.Transaction): RecordTransaction {
    const records = new RecordRepository(trx);
    const schema = new SchemaRepository(trx);
    return {
      findForUpdate: (id, reader) => records.find(id, true, reader),
      lockForWrite: (id, reader) => records.lockWithSchemaVersion(id, reader),
      lockRecords: (ids) => records.lockAll(ids),
      schemaVersion: () => schema.lockedVersion(),
      loadSchema: () => schema.load(),
      deadLinks: (links, reader) => records.deadLinks(links, reader),
      insertWithEvent: (record, event, idempotency) => records.insertWithEvent(record, outboxRow(this.names, event), undefined, idempotency),
      update: (id, values) => records.update(id, values),
      setRetired: (id, retired) => records.setRetired(id, retired),
      projectState: (id, reader) => records.projectState(id, reader),
      linksOutsideProject: (links, projectId, reader) => records.linksOutsideProject(links, projectId, reader),
      hasLiveShareLink: (playlistId) => hasLiveShareLink(trx, playlistId),
      appendEvent: async (event) => {
        const row = outboxRow(this.names, event);
        await this.outbox.append(trx, row.subject, row.eventId, row.json);
      },
      insertRecord: (record) => records.insertWithEvent(record, undefined),
      appendBatch: async (batchId, events) => {
        await this.outbox.append(trx, this.names.eventBatchSubject, batchId, encodeStreamBatch(events.map((e) => e.payload)));
      },
      storeAnswer: (key, answer) => storeAnswer(trx, key, answer),
    };
  }
}
