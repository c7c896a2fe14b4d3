/**
 * The records adapter on PostgreSQL: implements the ports of domain/ports.ts with Knex
 * transactions around the statements of the repositories beside it, each bound to the pool or to
 * one transaction when it is built. Every public method runs inside `guarded` (every database
 * failure mapped once); it names the subject each outbox row is published on.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { AppError, encodeStreamBatch, guarded, type NatsNames, type SqlStateErrors } from '@reelbase/lib-platform';
import type {
  IdempotencyClaim,
  InsertResult,
  NewRecord,
  OutboxEvent,
  RecordQueryStore,
  RecordStore,
  RecordTransaction,
  RecordViewStore,
  SchemaAdminStore,
  SchemaGuard,
  ShareLinkStore,
  SiteSyncStore,
  SiteSyncTransaction,
  StoredRecord,
  StoredSchema,
  WriteGuard,
} from '../domain/ports.js';
import { GroupCommit } from './group.commit.js';
import { OutboxRepository } from './outbox.repository.js';
import { RecordRepository } from './record.repository.js';
import { SchemaRepository } from './schema.repository.js';
import { RenameRepository } from './rename.repository.js';
import { UsageRepository, type RecordsUsage } from './usage.repository.js';
import { ViewsRepository } from './views.repository.js';
import { ShareRepository } from './share.repository.js';
import type { NewShareLink, ShareLinkRow } from '../domain/share.links.js';
import { QueryRepository } from './query.repository.js';
import { SiteSyncRepository } from './sitesync.repository.js';
import type { Site, SiteState, StateFilter, StateKey, StatusCounts } from '../domain/sitesync/sitesync.types.js';
import type { QueryGate, QueryPool } from './query.pool.js';
import type { QueryPlan, QueryRow } from '../domain/record.query.js';
import type { CodeRename } from '../domain/schema.rename.js';
import type { LinkRef } from '../domain/schema.validator.js';
import type { SummaryRow, SummaryStatement, SummaryStore } from '../domain/record.summary.js';

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

export class KnexRecordStore implements RecordStore, SchemaAdminStore, RecordViewStore, RecordQueryStore, ShareLinkStore, SiteSyncStore, SummaryStore {
  private readonly records: RecordRepository;
  private readonly outbox = new OutboxRepository();
  private readonly schema: SchemaRepository;
  private readonly usage: UsageRepository;
  private readonly views: ViewsRepository;
  private readonly shares: ShareRepository;
  private readonly queries: QueryRepository;
  private readonly sitesync: SiteSyncRepository;
  private readonly group: GroupCommit;

  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
    /**
     * The pool queries run on, the statement_timeout its connections carry, and the gate
     * summaries pass on it (store/query.pool.ts); without a gate, summaries are not held back.
     */
    private readonly queryPool: { db: QueryPool; timeoutMs: number; summaries?: QueryGate },
  ) {
    this.records = new RecordRepository(db);
    this.schema = new SchemaRepository(db);
    this.usage = new UsageRepository(db);
    this.views = new ViewsRepository(db);
    this.shares = new ShareRepository(db);
    this.queries = new QueryRepository(queryPool.db);
    this.sitesync = new SiteSyncRepository(db);
    this.group = new GroupCommit(db, this.records);
  }

  find(id: string): Promise<StoredRecord | undefined> {
    return guarded(() => this.records.find(id));
  }

  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard, idempotency?: IdempotencyClaim): Promise<InsertResult> {
    return guarded(async () => {
      // A create without an idempotency key goes with the next group commit (group.commit.ts).
      const row =
        idempotency === undefined
          ? await this.group.insert(record, this.outboxRow(event), guard)
          : await this.records.insertWithEvent(record, this.outboxRow(event), guard, idempotency);
      if (row) return { row };
      return { row: undefined, ...(await this.records.whyNotInserted(record.projectId, guard.links)) };
    }, WRITE_ERRORS);
  }

  schemaVersion(): Promise<number> {
    return guarded(() => this.schema.version());
  }

  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]> {
    return guarded(() => this.records.deadLinks(links));
  }

  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]> {
    return guarded(() => this.records.linksOutsideProject(links, projectId));
  }

  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T> {
    const run = () => this.db.transaction((trx) => fn(this.statements(trx)));
    return guarded(() => run().catch((err: unknown) => (collision(err) ? run() : Promise.reject(err))), TRANSACTION_ERRORS);
  }

  loadSchema(): Promise<StoredSchema | undefined> {
    return guarded(() => this.schema.load());
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
    const run = async () => (await this.queryPool.db.query<SummaryRow>(statement.sql, statement.params)).rows;
    return guarded(() => (summaries ? summaries.run(run) : run()), {
      '57014': (err) =>
        new AppError('unavailable', `the summary ran longer than ${timeoutMs} ms and was cancelled: narrow its filter`, { code: 'query_timeout', cause: err }),
    });
  }

  namesOf(ids: readonly string[]): Promise<Map<string, string | null>> {
    return guarded(async () => {
      const res = await this.queryPool.db.query<{ id: string; name: string | null }>(
        `select id::text, coalesce(nullif(data->>'code', ''), data->>'name') as name from records.record where id = any($1::uuid[])`,
        [ids],
      );
      return new Map(res.rows.map((r) => [r.id, r.name]));
    });
  }

  notesLinking(type: string, id: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.notesLinking(type, id));
  }

  tasksAssignedTo(userId: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.tasksAssignedTo(userId));
  }

  timeLogsOf(userId: string, from: string, to: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.timeLogsOf(userId, from, to));
  }

  findLive(ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.findLive(ids));
  }

  notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.notesLinkingAny(type, ids));
  }

  /**
   * The link is inserted holding a key-share lock on its Playlist's row, so a change of the
   * Playlist's `versions` in flight (which holds the row for update) either commits before the
   * link exists or waits and then sees it (docs/api-notes.md, "Roles and who may write").
   */
  insertShareLink(link: NewShareLink): Promise<ShareLinkRow> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw('select 1 from records.record where id = ? for key share', [link.playlistId]);
        return new ShareRepository(trx).insert(link);
      }),
    );
  }

  shareLinksOf(playlistId: string): Promise<ShareLinkRow[]> {
    return guarded(() => this.shares.ofPlaylist(playlistId));
  }

  shareLinkByDigest(digest: Buffer): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byDigest(digest));
  }

  shareLinkById(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byId(id));
  }

  revokeShareLink(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.revoke(id));
  }

  siteSyncTransaction<T>(fn: (tx: SiteSyncTransaction) => Promise<T>): Promise<T> {
    return guarded(() => this.db.transaction((trx) => fn(this.siteSyncStatements(trx))));
  }

  listSites(): Promise<Site[]> {
    return guarded(() => this.sitesync.listSites());
  }

  findSite(code: string): Promise<Site | undefined> {
    return guarded(() => this.sitesync.findSite(code));
  }

  findState(key: StateKey): Promise<SiteState | undefined> {
    return guarded(() => this.sitesync.findState(key));
  }

  listStates(filter: StateFilter, after: StateKey | undefined, limit: number): Promise<SiteState[]> {
    return guarded(() => this.sitesync.listStates(filter, after, limit));
  }

  countStates(filter: Pick<StateFilter, 'projectId' | 'site'>): Promise<StatusCounts> {
    return guarded(() => this.sitesync.countStates(filter));
  }

  /** The site sync statements of one transaction, and the outbox of the same transaction. */
  private siteSyncStatements(trx: Knex.Transaction): SiteSyncTransaction {
    const repo = new SiteSyncRepository(trx);
    return {
      upsertSite: (site) => repo.upsertSite(site),
      lockSite: (code, mode) => repo.findSite(code, mode),
      deleteSite: (code) => repo.deleteSite(code),
      countStatesOf: (site) => repo.countStatesOf(site),
      liveRepresentations: (ids) => repo.liveRepresentations(ids),
      requestStates: (reps, site, priority, keep) => repo.requestStates(reps, site, priority, keep),
      claim: (input) => repo.claim(input),
      lapse: (scope, max, error) => repo.lapse(scope, max, error),
      report: (change) => repo.report(change),
      findState: (key) => repo.findState(key, true),
      setState: (key, status, priority, reset) => repo.setState(key, status, priority, reset),
      appendEvents: (events) => repo.appendEvents(events.map((e) => this.outboxRow(e))),
    };
  }

  /** The statements of one transaction: repositories bound to `trx` (a unit of work). */
  private statements(trx: Knex.Transaction): RecordTransaction {
    const records = new RecordRepository(trx);
    const schema = new SchemaRepository(trx);
    const shares = new ShareRepository(trx);
    return {
      findForUpdate: (id) => records.find(id, true),
      lockForWrite: (id) => records.lockWithSchemaVersion(id),
      lockRecords: (ids) => records.lockAll(ids),
      schemaVersion: () => schema.lockedVersion(),
      loadSchema: () => schema.load(),
      deadLinks: (links) => records.deadLinks(links),
      insertWithEvent: (record, event) => records.insertWithEvent(record, this.outboxRow(event)),
      update: (id, values) => records.update(id, values),
      setRetired: (id, retired) => records.setRetired(id, retired),
      isLiveProject: (id) => records.isLiveProject(id),
      linksOutsideProject: (links, projectId) => records.linksOutsideProject(links, projectId),
      hasLiveShareLink: (playlistId) => shares.hasLive(playlistId),
      appendEvent: async (event) => {
        const row = this.outboxRow(event);
        await this.outbox.append(trx, row.subject, row.eventId, row.json);
      },
      insertRecord: (record) => records.insertWithEvent(record, undefined),
      appendBatch: async (batchId, events) => {
        await this.outbox.append(trx, this.names.eventBatchSubject, batchId, encodeStreamBatch(events.map((e) => e.payload)));
      },
    };
  }

  /** The outbox row of an event: published on `events.<Type>.<action>`. */
  private outboxRow(event: OutboxEvent): { subject: string; eventId: string; json: string } {
    const { payload } = event;
    return { subject: this.names.eventSubject(payload.entity_type, payload.action), eventId: payload.event_id, json: event.json };
  }
}
