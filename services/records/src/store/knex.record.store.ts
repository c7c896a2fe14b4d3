/**
 * The record store on PostgreSQL (domain/record.store.ts): Knex transactions around the
 * statements of record.repository.ts and outbox.repository.ts. It names the subject each
 * outbox row is published on and maps every database failure once.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { AppError, guarded, type NatsNames, type SqlStateErrors } from '@reelbase/lib-platform';
import type {
  InsertResult,
  NewRecord,
  OutboxEvent,
  RecordStore,
  RecordTransaction,
  SchemaGuard,
  StoredRecord,
  StoredSchema,
  WriteGuard,
} from '../domain/record.store.js';
import type { RecordViewStore } from '../domain/record.views.js';
import { OutboxRepository } from './outbox.repository.js';
import { RecordRepository } from './record.repository.js';
import { SchemaRepository } from './schema.repository.js';
import { RenameRepository } from './rename.repository.js';
import { UsageRepository, type RecordsUsage } from './usage.repository.js';
import { ViewsRepository } from './views.repository.js';
import { ShareRepository } from './share.repository.js';
import type { NewShareLink, ShareLinkRow, ShareLinkStore } from '../domain/share.links.js';
import { QueryRepository } from './query.repository.js';
import type { QueryPool } from './query.pool.js';
import type { QueryPlan, RecordQueryStore, QueryRow } from '../domain/record.query.js';
import type { SchemaAdminStore } from '../domain/schema.admin.js';
import type { CodeRename } from '../domain/schema.rename.js';
import type { LinkRef } from '../domain/schema.validator.js';

/** A reused record id (only services choose ids) is a conflict, not a server failure. */
const WRITE_ERRORS: SqlStateErrors = {
  '23505': () => AppError.conflict('duplicate_id', 'a record with this id already exists'),
};

export class KnexRecordStore implements RecordStore, SchemaAdminStore, RecordViewStore, RecordQueryStore, ShareLinkStore {
  private readonly records = new RecordRepository();
  private readonly outbox = new OutboxRepository();
  private readonly schema = new SchemaRepository();
  private readonly renames = new RenameRepository();
  private readonly usage = new UsageRepository();
  private readonly views = new ViewsRepository();
  private readonly shares = new ShareRepository();
  private readonly queries = new QueryRepository();

  constructor(
    private readonly db: Knex,
    private readonly names: NatsNames,
    /** The pool queries run on and the statement_timeout its connections carry (store/query.pool.ts). */
    private readonly queryPool: { db: QueryPool; timeoutMs: number },
  ) {}

  find(id: string): Promise<StoredRecord | undefined> {
    return guarded(() => this.records.find(this.db, id));
  }

  insertWithEvent(record: NewRecord, event: OutboxEvent, guard: WriteGuard): Promise<InsertResult> {
    return guarded(async () => {
      const row = await this.records.insertWithEvent(this.db, record, this.outboxRow(event), guard);
      if (row) return { row };
      return { row: undefined, ...(await this.records.whyNotInserted(this.db, record.projectId, guard.links)) };
    }, WRITE_ERRORS);
  }

  schemaVersion(): Promise<number> {
    return guarded(() => this.schema.version(this.db));
  }

  deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]> {
    return guarded(() => this.records.deadLinks(this.db, links));
  }

  linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]> {
    return guarded(() => this.records.linksOutsideProject(this.db, links, projectId));
  }

  transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T> {
    return guarded(() => this.db.transaction((trx) => fn(this.statements(trx))), WRITE_ERRORS);
  }

  loadSchema(): Promise<StoredSchema | undefined> {
    return guarded(() => this.schema.load(this.db));
  }

  applySchema(version: number, snapshotJson: string, refuse?: SchemaGuard): Promise<boolean> {
    return guarded(() =>
      this.db.transaction((trx) =>
        this.schema.apply(trx, version, snapshotJson, refuse && ((held) => refuse(held, (removed) => this.usage.countRemoved(trx, removed)))),
      ),
    );
  }

  applyRename(rename: CodeRename): Promise<number> {
    return guarded(() => this.db.transaction((trx) => this.renames.apply(trx, rename)));
  }

  countUsage(): Promise<RecordsUsage> {
    return guarded(() => this.usage.count(this.db));
  }

  query(plan: QueryPlan): Promise<{ rows: QueryRow[]; schemaVersion: number; total?: number }> {
    const { db, timeoutMs } = this.queryPool;
    return guarded(() => this.queries.query(db, plan), {
      '57014': (err) =>
        new AppError('unavailable', `the query ran longer than ${timeoutMs} ms and was cancelled: narrow its filter or page with a smaller limit`, {
          code: 'query_timeout',
          cause: err,
        }),
    });
  }

  notesLinking(type: string, id: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.notesLinking(this.db, type, id));
  }

  tasksAssignedTo(userId: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.tasksAssignedTo(this.db, userId));
  }

  timeLogsOf(userId: string, from: string, to: string): Promise<StoredRecord[]> {
    return guarded(() => this.views.timeLogsOf(this.db, userId, from, to));
  }

  findLive(ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.findLive(this.db, ids));
  }

  notesLinkingAny(type: string, ids: readonly string[]): Promise<StoredRecord[]> {
    return guarded(() => this.shares.notesLinkingAny(this.db, type, ids));
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
        return this.shares.insert(trx, link);
      }),
    );
  }

  shareLinksOf(playlistId: string): Promise<ShareLinkRow[]> {
    return guarded(() => this.shares.ofPlaylist(this.db, playlistId));
  }

  shareLinkByDigest(digest: Buffer): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byDigest(this.db, digest));
  }

  shareLinkById(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.byId(this.db, id));
  }

  revokeShareLink(id: string): Promise<ShareLinkRow | undefined> {
    return guarded(() => this.shares.revoke(this.db, id));
  }

  private statements(trx: Knex.Transaction): RecordTransaction {
    return {
      findForUpdate: (id) => this.records.find(trx, id, true),
      lockForWrite: (id) => this.records.lockWithSchemaVersion(trx, id),
      schemaVersion: () => this.schema.lockedVersion(trx),
      loadSchema: () => this.schema.load(trx),
      deadLinks: (links) => this.records.deadLinks(trx, links),
      insertWithEvent: (record, event) => this.records.insertWithEvent(trx, record, this.outboxRow(event)),
      update: (id, values) => this.records.update(trx, id, values),
      setRetired: (id, retired) => this.records.setRetired(trx, id, retired),
      isLiveProject: (id) => this.records.isLiveProject(trx, id),
      linksOutsideProject: (links, projectId) => this.records.linksOutsideProject(trx, links, projectId),
      hasLiveShareLink: (playlistId) => this.shares.hasLive(trx, playlistId),
      appendEvent: async (event) => {
        const row = this.outboxRow(event);
        await this.outbox.append(trx, row.subject, row.eventId, row.json);
      },
    };
  }

  /** The outbox row of an event: published on `events.<Type>.<action>`. */
  private outboxRow(event: OutboxEvent): { subject: string; eventId: string; json: string } {
    const { payload } = event;
    return { subject: this.names.eventSubject(payload.entity_type, payload.action), eventId: payload.event_id, json: event.json };
  }
}
