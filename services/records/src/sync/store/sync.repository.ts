/**
 * Sync on PostgreSQL (docs/architecture.md, "Sync"): implements the SyncStore port. An import is one
 * transaction whose writes are multi-row statements: the new records with their outbox rows, mappings
 * and echo marks in one statement, the updates with theirs in one more. Every public method runs inside
 * `guarded`.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { AppError, guarded, sqlIsoMicros, type NatsNames } from '@reelbase/lib-platform';
import { type NewRecord, type OutboxEvent, type StoredRecord } from '../../kernel/domain/record.ports.js';
import { recordsOutbox, stampedPayload } from '../../kernel/store/outbox.repository.js';
import type { Db, RecordsPools } from '../../kernel/store/knex.db.js';
import { COLUMNS, RecordRepository, toStored, type Row } from '../../kernel/store/record.repository.js';
import { SchemaRepository } from '../../kernel/store/schema.repository.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import { readableSql } from '../../kernel/store/project.readers.sql.js';
import { StaleSyncRead, type SyncMapping, type SyncStore, type SyncTransaction, type SyncUpdate } from '../domain/sync.ports.js';

const ERRORS = {
  '23505': () => AppError.conflict('duplicate_id', 'a record or mapping of this import exists already; try again'),
};

/** COLUMNS of the row `r` (the mappings' statement names two relations). */
const R_COLUMNS = `r.id, r.entity_type, r.project_id, r.status, r.active, r.thumbnail_id, r.created_by,
  ${sqlIsoMicros('r.created_at')} as created_at, ${sqlIsoMicros('r.updated_at')} as updated_at, r.retired_at is not null as retired, r.data`;

/**
 * The outbox rows of an import's statement: one per row of `v` (its event id, subject and payload,
 * in the input's order) that `r` wrote, stamped with the row's write time `r.at`.
 */
const OUTBOX_FROM_V_R = recordsOutbox.insertFrom(
  `select v.event_id, v.subject, ${stampedPayload('v.payload', 'r.at')} from v join r on r.id = v.id order by v.ord`,
);

interface MappingRow {
  source: string;
  entity_type: string;
  external_id: string;
  id: string;
}
const toMapping = (r: MappingRow): SyncMapping => ({ source: r.source, entityType: r.entity_type, externalId: r.external_id, id: r.id });

/** Each written row's `updated_at`, in the order of `ids` (statements return rows in any order). */
function stampsInOrder(rows: { id: string; updated_at: string }[], ids: readonly string[]): string[] {
  const byId = new Map(rows.map((r) => [r.id, r.updated_at]));
  return ids.map((id) => byId.get(id)!);
}

export class SyncRepository implements SyncStore {
  /** An import's transaction on the writes pool; the lookups (mappings, records, echoes, renames) on the reads pool. */
  private readonly db: Knex;
  private readonly reads: Knex;

  constructor(
    pools: RecordsPools,
    private readonly names: NatsNames,
  ) {
    this.db = pools.writes;
    this.reads = pools.reads;
  }

  syncTransaction<T>(fn: (tx: SyncTransaction) => Promise<T>): Promise<T> {
    return guarded(() => this.db.transaction((trx) => fn(this.statements(trx))), ERRORS);
  }

  findMappings(q: { source?: string; entityType?: string; externalId?: string; id?: string }, limit: number, reader: string | null): Promise<SyncMapping[]> {
    return guarded(async () => {
      const where: string[] = [];
      const params: unknown[] = [];
      if (q.id !== undefined) (where.push('m.id = ?::uuid'), params.push(q.id));
      if (q.source !== undefined) (where.push('m.source = ?'), params.push(q.source));
      if (q.entityType !== undefined) (where.push('m.entity_type = ?'), params.push(q.entityType));
      if (q.externalId !== undefined) (where.push('m.external_id = ?'), params.push(q.externalId));
      if (reader !== null) {
        where.push(`not exists (select 1 from records.record r where r.id = m.id and not ${readableSql('r', '?')})`);
        params.push(membershipProbe(reader));
      }
      const res = await this.reads.raw<{ rows: MappingRow[] }>(
        `select m.source, m.entity_type, m.external_id, m.id from records.sync_mapping m where ${where.join(' and ')}
          order by m.source, m.entity_type, m.external_id limit ${Math.trunc(limit)}`,
        params as Knex.RawBinding[],
      );
      return res.rows.map(toMapping);
    });
  }

  mappingsOf(ids: readonly string[]): Promise<SyncMapping[]> {
    return guarded(async () => {
      if (ids.length === 0) return [];
      const res = await this.reads.raw<{ rows: MappingRow[] }>(
        'select source, entity_type, external_id, id from records.sync_mapping where id = any(?::uuid[])',
        [ids as string[]] as unknown as Knex.RawBinding[],
      );
      return res.rows.map(toMapping);
    });
  }

  findMany(ids: readonly string[], reader: string | null): Promise<StoredRecord[]> {
    return guarded(async () => {
      if (ids.length === 0) return [];
      const readable = reader === null ? '' : ` and ${readableSql('record', '?')}`;
      const res = await this.reads.raw<{ rows: Row[] }>(`select ${COLUMNS} from records.record where id = any(?::uuid[])${readable}`, [
        ids as string[],
        ...(reader === null ? [] : [membershipProbe(reader)]),
      ] as unknown as Knex.RawBinding[]);
      return res.rows.map(toStored);
    });
  }

  echoes(source: string, writes: readonly { id: string; at: string }[]): Promise<Set<number>> {
    return guarded(async () => {
      if (writes.length === 0) return new Set();
      const res = await this.reads.raw<{ rows: { i: string }[] }>(
        `select e.i from unnest(?::uuid[], ?::timestamptz[]) with ordinality e(id, at, i)
          where exists (select 1 from records.sync_write w where w.record_id = e.id and w.updated_at = e.at and w.source = ?)`,
        [writes.map((w) => w.id), writes.map((w) => w.at), source] as unknown as Knex.RawBinding[],
      );
      return new Set(res.rows.map((r) => Number(r.i) - 1));
    });
  }

  typeRenames(): Promise<{ from: string; to: string }[]> {
    return guarded(async () => {
      const res = await this.reads.raw<{ rows: { from: string; to: string }[] }>(
        `select from_code as "from", to_code as "to" from records.applied_rename where kind = 'entity_type' order by applied_at, journal_id`,
      );
      return res.rows;
    });
  }

  /** The statements of one import: bound to `trx`. */
  private statements(trx: Knex.Transaction): SyncTransaction {
    const records = new RecordRepository(trx);
    const schema = new SchemaRepository(trx);
    return {
      lockSource: async (source) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('records:sync:' || ?))`, [source]);
      },
      schemaVersion: () => schema.lockedVersion(),
      loadSchema: () => schema.load(),
      mapped: async (source, keys) => {
        if (keys.length === 0) return { mappings: [], records: [] };
        const res = await trx.raw<{ rows: (Row & { map_type: string; map_external_id: string; map_id: string })[] }>(
          `select m.entity_type as map_type, m.external_id as map_external_id, m.id as map_id, ${R_COLUMNS}
             from unnest(?::text[], ?::text[], ?::boolean[]) k(t, e, own)
             join records.sync_mapping m on m.source = ? and m.entity_type = k.t and m.external_id = k.e
             left join records.record r on k.own and r.id = m.id`,
          [keys.map((k) => k.entityType), keys.map((k) => k.externalId), keys.map((k) => k.own), source] as unknown as Knex.RawBinding[],
        );
        const mappings: SyncMapping[] = [];
        const records: StoredRecord[] = [];
        for (const row of res.rows) {
          mappings.push({ source, entityType: row.map_type, externalId: row.map_external_id, id: row.map_id });
          if (row.id !== null) records.push(toStored(row));
        }
        return { mappings, records };
      },
      deadLinks: (links) => records.deadLinks(links),
      linksOutsideProject: (links, projectId) => records.linksOutsideProject(links, projectId),
      lockUserEmails: async () => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('records:sync:user-email'))`);
        const res = await trx.raw<{ rows: { id: string; email: string }[] }>(
          `select id, data->>'email' as email from records.record where entity_type = 'User' and jsonb_typeof(data->'email') = 'string'`,
        );
        return res.rows;
      },
      insertMany: (source, rows, events, externalIds) => this.insertMany(trx, source, rows, events, externalIds),
      updateMany: (source, updates, events) => this.updateMany(trx, source, updates, events),
    };
  }

  /**
   * The JSON array of the statement's input: each row's values, its outbox event (the payload spliced in
   * as already encoded) and its position.
   */
  private rowsJson(rows: readonly object[], events: readonly OutboxEvent[]): string {
    const parts = rows.map((row, k) => {
      const e = events[k]!;
      const head = JSON.stringify({ ...row, event_id: e.payload.event_id, subject: this.names.eventSubject(e.payload.entity_type, e.payload.action), ord: k });
      return `${head.slice(0, -1)},"payload":${e.json}}`;
    });
    return `[${parts.join(',')}]`;
  }

  private async insertMany(
    db: Db,
    source: string,
    rows: readonly NewRecord[],
    events: readonly OutboxEvent[],
    externalIds: readonly string[],
  ): Promise<string[]> {
    const input = rows.map((r, k) => ({
      id: r.id,
      entity_type: r.entityType,
      project_id: r.projectId,
      status: r.status,
      active: r.active,
      thumbnail_id: r.thumbnailId,
      created_by: r.createdBy,
      data: r.data,
      external_id: externalIds[k],
    }));
    // Every row of the statement gets the same clock_timestamp(): one value answers for all of them.
    const res = await db.raw<{ rows: { updated_at: string }[] }>(
      `with c as (select clock_timestamp() as ts),
       v as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, entity_type text, project_id uuid, status text, active boolean,
               thumbnail_id uuid, created_by uuid, data jsonb, external_id text, event_id uuid, subject text, ord int, payload jsonb)),
       r as (
         insert into records.record (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
         select v.id, v.entity_type, v.project_id, v.status, v.active, v.thumbnail_id, v.created_by, c.ts, c.ts, v.data from v, c order by v.ord
         returning id, updated_at, ${sqlIsoMicros('updated_at')} as at
       ),
       o as (${OUTBOX_FROM_V_R}),
       w as (insert into records.sync_write (record_id, updated_at, source) select r.id, r.updated_at, ? from r),
       m as (insert into records.sync_mapping (source, entity_type, external_id, id) select ?, v.entity_type, v.external_id, v.id from v)
       select ${sqlIsoMicros('c.ts')} as updated_at from c`,
      [this.rowsJson(input, events), source, source],
    );
    return rows.map(() => res.rows[0]!.updated_at);
  }

  private async updateMany(db: Db, source: string, updates: readonly SyncUpdate[], events: readonly OutboxEvent[]): Promise<string[]> {
    const ids = updates.map((u) => u.id);
    // The rows read without a lock are locked now, in id order (as every multi-row lock here), and
    // checked: one changed since the import read it means the plan is stale.
    const locked = await db.raw<{ rows: { id: string; updated_at: string }[] }>(
      `select id, ${sqlIsoMicros('updated_at')} as updated_at from records.record where id = any(?::uuid[]) order by id for update`,
      [ids] as unknown as Knex.RawBinding[],
    );
    const now = new Map(locked.rows.map((r) => [r.id, r.updated_at]));
    const stale = updates.filter((u) => now.get(u.id) !== u.readAt).map((u) => u.id);
    if (stale.length) throw new StaleSyncRead(stale);
    const input = updates.map((u) => ({
      id: u.id,
      project_id: u.values.projectId,
      status: u.values.status,
      active: u.values.active,
      thumbnail_id: u.values.thumbnailId,
      data: u.values.data,
    }));
    // updated_at strictly increases per row (as every update), so each write keeps its own ETag.
    const res = await db.raw<{ rows: { id: string; updated_at: string }[] }>(
      `with v as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, project_id uuid, status text, active boolean,
               thumbnail_id uuid, data jsonb, event_id uuid, subject text, ord int, payload jsonb)),
       r as (
         update records.record t
            set project_id = v.project_id, status = v.status, active = v.active, thumbnail_id = v.thumbnail_id, data = v.data,
                updated_at = greatest(clock_timestamp(), t.updated_at + interval '1 microsecond')
           from v where t.id = v.id
         returning t.id, t.updated_at, ${sqlIsoMicros('t.updated_at')} as at
       ),
       o as (${OUTBOX_FROM_V_R}),
       w as (insert into records.sync_write (record_id, updated_at, source) select r.id, r.updated_at, ? from r)
       select r.id, r.at as updated_at from r`,
      [this.rowsJson(input, events), source],
    );
    return stampsInOrder(res.rows, ids);
  }
}
