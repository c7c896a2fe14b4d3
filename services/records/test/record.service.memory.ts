/**
 * The record service against an in-memory store, for the unit tests of record.service.ts
 * (record.service.spec.ts, record.service.kinds.spec.ts): rows and outbox in memory, the callers
 * the tests act as, and a fresh service with one Project for each test. The reader rule is the SQL
 * one's (kernel/store/project.readers.sql.ts) over the rows in memory: a row whose project (its
 * `projectId`, or itself for a Project) is `restricted` is read only by the users its `members` list.
 */
import { AppError, encodeStreamEvent, InProcessBus, isoMicros, type CallContext, type Principal } from '@reelbase/lib-platform';
import { RecordService } from '../src/core/domain/record.service.js';
import type { NewRecord, OutboxEvent, RecordValues, StoredRecord, StoredSchema, WriteGuard, RecordsBusTopics } from '../src/kernel/domain/record.ports.js';
import type { ProjectState } from '../src/kernel/domain/record.ports.js';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import type { LinkRef } from '../src/kernel/domain/schema.validator.js';
import type { InsertResult, RecordStore, RecordTransaction } from '../src/core/domain/core.ports.js';

/** Rows and outbox in memory; a transaction works on copies and keeps them only if it resolves. */
export class MemoryRecordStore implements RecordStore {
  rows = new Map<string, StoredRecord>();
  outbox: OutboxEvent[] = [];
  /** The ids each transaction locked up front, in the order given. */
  locked: string[][] = [];
  private tick = 0;

  /** A strictly increasing timestamp in the services' format. */
  private now(): string {
    this.tick += 1;
    return isoMicros(new Date(Date.UTC(2026, 0, 1) + this.tick), this.tick % 1000);
  }

  async find(id: string, reader?: string | null): Promise<StoredRecord | undefined> {
    const row = this.readable(this.rows, this.rows.get(id), reader);
    return row && structuredClone(row);
  }

  /** `row` when `reader` may read it (or reads everything), else undefined. */
  private readable(rows: Map<string, StoredRecord>, row: StoredRecord | undefined, reader: string | null | undefined): StoredRecord | undefined {
    if (!row || reader === null || reader === undefined) return row;
    const project = rows.get(row.projectId ?? row.id);
    if (project?.entityType !== 'Project' || project.data.restricted !== true) return row;
    const members = Array.isArray(project.data.members) ? (project.data.members as { id?: unknown }[]) : [];
    return members.some((m) => m?.id === reader) ? row : undefined;
  }

  /** The stored schema (records.schema_state), undefined before the first ApplySchema. */
  schema: StoredSchema | undefined;
  /** Schema reads, to show when the service reloads. */
  schemaLoads = 0;

  async loadSchema(): Promise<StoredSchema | undefined> {
    this.schemaLoads += 1;
    return this.schema && structuredClone(this.schema);
  }

  async applySchema(version: number, snapshotJson: string): Promise<boolean> {
    if (this.schema && this.schema.version >= version) return false;
    this.schema = { version, snapshot: JSON.parse(snapshotJson) as SchemaSnapshot };
    return true;
  }

  async schemaVersion(): Promise<number> {
    return this.schema?.version ?? 0;
  }

  async deadLinks(links: readonly LinkRef[], reader?: string | null): Promise<LinkRef[]> {
    return this.dead(this.rows, links, reader);
  }

  async linksOutsideProject(links: readonly LinkRef[], projectId: string | null, reader?: string | null): Promise<LinkRef[]> {
    return this.outside(this.rows, links, projectId, reader);
  }

  private outside(rows: Map<string, StoredRecord>, links: readonly LinkRef[], projectId: string | null, reader?: string | null): LinkRef[] {
    return links.filter((l) => {
      const row = this.readable(rows, rows.get(l.id), reader);
      return row !== undefined && !row.retired && row.projectId !== projectId;
    });
  }

  /** Playlists with a live share link. */
  sharedPlaylists = new Set<string>();

  private dead(rows: Map<string, StoredRecord>, links: readonly LinkRef[], reader?: string | null): LinkRef[] {
    return links.filter((l) => {
      const row = this.readable(rows, rows.get(l.id), reader);
      return !row || row.retired || row.entityType !== l.type;
    });
  }

  async insertWithEvent(r: NewRecord, event: OutboxEvent, guard: WriteGuard): Promise<InsertResult> {
    const schemaVersion = await this.schemaVersion();
    const state = r.projectId === null ? 'live' : this.projectState(this.rows, r.projectId, guard.reader);
    const projectLive = state !== 'missing';
    const projectHidden = state === 'hidden';
    const deadLinks = this.dead(this.rows, guard.links, guard.reader);
    if (schemaVersion !== guard.schemaVersion || state !== 'live' || deadLinks.length)
      return { row: undefined, schemaVersion, projectLive, projectHidden, deadLinks };
    return { row: this.insert(this.rows, this.outbox, r, event)! };
  }

  private insert(rows: Map<string, StoredRecord>, outbox: OutboxEvent[], r: NewRecord, event: OutboxEvent): StoredRecord | undefined {
    if (rows.has(r.id)) throw AppError.conflict('duplicate_id', 'a record with this id already exists');
    if (r.projectId !== null && !this.isLiveProject(rows, r.projectId)) return undefined;
    const at = this.now();
    const row: StoredRecord = { ...structuredClone(r), createdAt: at, updatedAt: at, retired: false };
    rows.set(r.id, row);
    // As the SQL store does: the event's occurred_at is the row's updated_at.
    const payload = { ...event.payload, occurred_at: at };
    outbox.push({ payload, json: encodeStreamEvent(payload) });
    return structuredClone(row);
  }

  async transaction<T>(fn: (tx: RecordTransaction) => Promise<T>): Promise<T> {
    const rows = new Map([...this.rows].map(([k, v]) => [k, structuredClone(v)]));
    const outbox = [...this.outbox];
    const write = (id: string, change: Partial<StoredRecord>): StoredRecord => {
      const row = { ...rows.get(id)!, ...structuredClone(change), updatedAt: this.now() };
      rows.set(id, row);
      return structuredClone(row);
    };
    const out = await fn({
      findForUpdate: async (id, reader) => {
        const row = this.readable(rows, rows.get(id), reader);
        return row && structuredClone(row);
      },
      lockRecords: async (ids) => {
        this.locked.push([...ids]);
      },
      lockForWrite: async (id, reader) => {
        const row = this.readable(rows, rows.get(id), reader);
        return { record: row && structuredClone(row), schemaVersion: row ? await this.schemaVersion() : -1 };
      },
      schemaVersion: () => this.schemaVersion(),
      loadSchema: () => this.loadSchema(),
      deadLinks: async (links, reader) => this.dead(rows, links, reader),
      insertWithEvent: async (r, event) => this.insert(rows, outbox, r, event),
      update: async (id, v: RecordValues) => write(id, v),
      setRetired: async (id, retired) => write(id, { retired }),
      projectState: async (id, reader) => this.projectState(rows, id, reader),
      linksOutsideProject: async (links, projectId, reader) => this.outside(rows, links, projectId, reader),
      hasLiveShareLink: async (id) => this.sharedPlaylists.has(id),
      appendEvent: async (event) => {
        outbox.push(event);
      },
      insertRecord: async (r) => {
        if (r.projectId !== null && !this.isLiveProject(rows, r.projectId)) return undefined;
        const at = this.now();
        const row: StoredRecord = { ...structuredClone(r), createdAt: at, updatedAt: at, retired: false };
        rows.set(r.id, row);
        return structuredClone(row);
      },
      appendBatch: async (_batchId, events) => void outbox.push(...events),
      storeAnswer: async () => true,
    });
    this.rows = rows;
    this.outbox = outbox;
    return out;
  }

  private isLiveProject(rows: Map<string, StoredRecord>, id: string): boolean {
    const p = rows.get(id);
    return p !== undefined && p.entityType === 'Project' && !p.retired;
  }

  private projectState(rows: Map<string, StoredRecord>, id: string, reader?: string | null): ProjectState {
    if (!this.isLiveProject(rows, id)) return 'missing';
    return this.readable(rows, rows.get(id), reader) ? 'live' : 'hidden';
  }
}

export const ME = '0190a000-0000-7000-8000-0000000000c1';
export const OTHER = '0190a000-0000-7000-8000-0000000000c2';
export const ctxOf = (role: Principal['role'], userId = ME, authKind: Principal['authKind'] = 'token'): CallContext => ({
  requestId: 'r1',
  principal: { userId, role, authKind },
});
export const admin = ctxOf('Admin');
export const artist = ctxOf('Artist');
export const link = (id: string) => ({ type: 'User', id });

export async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** A service on a new in-memory store, the ids of the events it committed, and a live Project. */
export async function newRecordService(): Promise<{ store: MemoryRecordStore; service: RecordService; committed: string[]; projectId: string }> {
  const store = new MemoryRecordStore();
  const bus = new InProcessBus<RecordsBusTopics>();
  const committed: string[] = [];
  bus.subscribe('committed', (e) => void committed.push(e.event_id));
  const service = new RecordService({ store, bus, maxEventBytes: 64 * 1024 });
  const projectId = (await service.create({ entityType: 'Project', dataJson: '{"code":"P"}' }, admin)).id;
  return { store, service, committed, projectId };
}
