/**
 * SQL for the `record` table. Every statement takes the connection or transaction to run
 * on, so the domain decides what shares a transaction. Timestamps leave PostgreSQL already
 * formatted with microseconds: a JS Date would cut them to milliseconds and break ETags.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { sqlIsoMicros } from '@reelbase/lib-platform';
import type { NewRecord, RecordValues, StoredRecord } from '../domain/record.store.js';
import type { DataObject } from '../domain/record.types.js';

/** A connection or a transaction. */
export type Db = Knex | Knex.Transaction;

const COLUMNS = `id, entity_type, project_id, status, active, thumbnail_id, created_by,
  ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('updated_at')} as updated_at, retired_at is not null as retired, data`;

// Strictly increasing per row, so two writes within one microsecond (or a clock step back)
// still give two different ETags.
const NEXT_UPDATED_AT = `greatest(clock_timestamp(), updated_at + interval '1 microsecond')`;

interface Row {
  id: string;
  entity_type: string;
  project_id: string | null;
  status: string | null;
  active: boolean;
  thumbnail_id: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  retired: boolean;
  data: DataObject;
}

const toStored = (r: Row): StoredRecord => ({
  id: r.id,
  entityType: r.entity_type,
  projectId: r.project_id,
  status: r.status,
  active: r.active,
  thumbnailId: r.thumbnail_id,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  data: r.data ?? {},
  retired: r.retired,
});

async function one(db: Db, sql: string, params: readonly unknown[]): Promise<StoredRecord | undefined> {
  const res = await db.raw<{ rows: Row[] }>(sql, params as Knex.RawBinding[]);
  const row = res.rows[0];
  return row ? toStored(row) : undefined;
}

/** Statements on `records.record`. */
export class RecordRepository {
  /** The row with `id`, retired or not; `lock` takes a row lock for the rest of the transaction. */
  find(db: Db, id: string, lock = false): Promise<StoredRecord | undefined> {
    return one(db, `select ${COLUMNS} from records.record where id = ?${lock ? ' for update' : ''}`, [id]);
  }

  /**
   * Inserts a new live record and its outbox row in ONE statement (so one round trip, atomic
   * without an explicit transaction); created_at = updated_at = the statement's clock, which
   * also becomes the event's `occurred_at`. When `projectId` is set and is not a live Project
   * nothing is written and the result is undefined.
   *
   * The project is checked without a row lock: 32 writers taking `for share` on one Project
   * row serialise on MultiXact bookkeeping, and a Shot created while its project is being
   * retired is no different from one created a moment before (retirement is reversible).
   */
  async insertWithEvent(db: Db, v: NewRecord, event: { subject: string; eventId: string; json: string }): Promise<StoredRecord | undefined> {
    return one(
      db,
      `with c as (select clock_timestamp() as ts),
       r as (
         insert into records.record
           (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
         select ?, ?, ?::uuid, ?, ?, ?, ?, c.ts, c.ts, ?::jsonb from c
          where ?::uuid is null
             or exists (select 1 from records.record p
                         where p.id = ?::uuid and p.entity_type = 'Project' and p.retired_at is null)
         returning ${COLUMNS}
       ),
       o as (
         insert into records.outbox (event_id, subject, payload)
         select ?, ?, ?::jsonb || jsonb_build_object('occurred_at', r.updated_at) from r
       )
       select * from r`,
      [
        v.id,
        v.entityType,
        v.projectId,
        v.status,
        v.active,
        v.thumbnailId,
        v.createdBy,
        JSON.stringify(v.data),
        v.projectId,
        v.projectId,
        event.eventId,
        event.subject,
        event.json,
      ],
    );
  }

  /** Overwrites the writable columns of a row and moves its updated_at. */
  async update(db: Db, id: string, v: RecordValues): Promise<StoredRecord> {
    const row = await one(
      db,
      `update records.record
          set project_id = ?, status = ?, active = ?, thumbnail_id = ?, data = ?::jsonb, updated_at = ${NEXT_UPDATED_AT}
        where id = ?
       returning ${COLUMNS}`,
      [v.projectId, v.status, v.active, v.thumbnailId, JSON.stringify(v.data), id],
    );
    return row!;
  }

  /** Retires (soft-deletes) or revives a row; either moves updated_at. */
  async setRetired(db: Db, id: string, retired: boolean): Promise<StoredRecord> {
    const row = await one(
      db,
      `update records.record
          set retired_at = ${retired ? 'clock_timestamp()' : 'null'}, updated_at = ${NEXT_UPDATED_AT}
        where id = ?
       returning ${COLUMNS}`,
      [id],
    );
    return row!;
  }

  /**
   * True when `id` is a live Project. `for share` keeps a concurrent transaction from retiring
   * the project until this one commits (`for key share` would not: retiring changes no key).
   */
  async isLiveProject(db: Db, id: string): Promise<boolean> {
    const res = await db.raw<{ rows: unknown[] }>(`select 1 from records.record where id = ? and entity_type = 'Project' and retired_at is null for share`, [
      id,
    ]);
    return res.rows.length > 0;
  }
}
