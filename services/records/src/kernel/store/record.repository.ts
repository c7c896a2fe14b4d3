/**
 * SQL for the `record` table. A repository is bound to the connection or the transaction it runs
 * on when it is built (knex.record.store.ts builds one per transaction), so the domain decides what
 * shares a transaction. Timestamps leave PostgreSQL already
 * formatted with microseconds: a JS Date would cut them to milliseconds and break ETags.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { pgPlaceholders, queryPrepared, sqlIsoMicros } from '@reelbase/lib-platform';
import type { IdempotencyClaim, NewRecord, RecordValues, StoredRecord } from '../domain/record.ports.js';
import type { ClientRecord } from '../domain/record.types.js';
import type { LinkRef } from '../domain/schema.validator.js';
import type { Db } from './knex.db.js';
import { recordsOutbox, stampedPayload } from './outbox.repository.js';
import { SCHEMA_SHARED_LOCK_SQL, SCHEMA_VERSION_SQL } from './schema.repository.js';
import type { WriteGuard } from '../domain/record.ports.js';

/** The columns of a StoredRecord, timestamps formatted with microseconds. */
export const COLUMNS = `id, entity_type, project_id, status, active, thumbnail_id, created_by,
  ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('updated_at')} as updated_at, retired_at is not null as retired, data`;

// Strictly increasing per row, so two writes within one microsecond (or a clock step back)
// still give two different ETags.
const NEXT_UPDATED_AT = `greatest(clock_timestamp(), updated_at + interval '1 microsecond')`;

/** A row as selected with {@link COLUMNS}: the record's client form and whether it is retired. */
export interface Row extends ClientRecord {
  retired: boolean;
}

export const toStored = (r: Row): StoredRecord => ({
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

/** Live records of the link's type, as a condition on `l.id` and `l.t`. */
export const LIVE_LINK_TARGET = `exists (select 1 from records.record x where x.id = l.id and x.entity_type = l.t and x.retired_at is null)`;

/**
 * The statement of {@link RecordRepository.insertWithEvent} with Knex's `?` bindings: the record,
 * its outbox row (without `event`, the record only) and the idempotency key's answer, in one
 * statement; the link rows come from the triggers on `records.record` (link.migration.ts).
 */
export function insertWithEventStatement(
  v: NewRecord,
  event: { subject: string; eventId: string; json: string } | undefined,
  guard?: WriteGuard,
  idempotency?: IdempotencyClaim,
): { sql: string; bindings: unknown[] } {
  const guardSql =
    guard === undefined
      ? ''
      : `and ${SCHEMA_SHARED_LOCK_SQL} and ${SCHEMA_VERSION_SQL} = ?::bigint` +
        (guard.links.length > 0 ? ` and not exists (select 1 from unnest(?::uuid[], ?::text[]) l(id, t) where not ${LIVE_LINK_TARGET})` : '');
  const guardParams: unknown[] =
    guard === undefined
      ? []
      : guard.links.length > 0
        ? [guard.schemaVersion, guard.links.map((l) => l.id), guard.links.map((l) => l.type)]
        : [guard.schemaVersion];
  return {
    sql: `with c as (select clock_timestamp() as ts),
     r as (
       insert into records.record
         (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
       select ?, ?, ?::uuid, ?, ?, ?, ?, c.ts, c.ts, ?::jsonb from c
        where (?::uuid is null
           or exists (select 1 from records.record p
                       where p.id = ?::uuid and p.entity_type = 'Project' and p.retired_at is null))
         ${guardSql}
       returning ${COLUMNS}
     )${event === undefined ? '' : ','}
     ${
       // Without an event (a batch's create: its events leave as one outbox row), the record only.
       event === undefined
         ? ''
         : `o as (
       ${recordsOutbox.insertFrom(`select ?, ?, ${stampedPayload('?::jsonb', 'r.updated_at')} from r`)}
     )`
     }${
       // The claimed key's answer is this record: stored by the statement that writes it.
       idempotency === undefined
         ? ''
         : `, k as (
       update records.idempotency_key set status = 200, record = (select to_jsonb(r) from r)
        where scope = ? and claim = ?::uuid and status is null and exists (select 1 from r)
     )`
     }
     select * from r`,
    bindings: [
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
      ...guardParams,
      ...(event === undefined ? [] : [event.eventId, event.subject, event.json]),
      ...(idempotency === undefined ? [] : [idempotency.scope, idempotency.claim]),
    ],
  };
}

/** {@link insertWithEventStatement} as `pg` takes it, its bindings numbered `$1..$n`. */
export function insertWithEventPgStatement(...args: Parameters<typeof insertWithEventStatement>): { text: string; values: unknown[] } {
  const { sql, bindings } = insertWithEventStatement(...args);
  return { text: pgPlaceholders(sql), values: bindings };
}

/** Statements on `records.record`. */
export class RecordRepository {
  constructor(private readonly db: Db) {}

  /** The row with `id`, retired or not; `lock` takes a row lock for the rest of the transaction. */
  find(id: string, lock = false): Promise<StoredRecord | undefined> {
    return one(this.db, `select ${COLUMNS} from records.record where id = ?${lock ? ' for update' : ''}`, [id]);
  }

  /** Locks the rows with `ids` for update, in id order, under the shared schema lock (taken first). */
  async lockAll(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.raw(`select id from records.record where id = any(?::uuid[]) and ${SCHEMA_SHARED_LOCK_SQL} order by id for update`, [
      ids as string[],
    ] as unknown as Knex.RawBinding[]);
  }

  /**
   * The row with `id` locked, and in the same statement the stored schema version, so an update
   * validates against the schema as it was when its statement began (-1 when there is no row).
   */
  async lockWithSchemaVersion(id: string): Promise<{ record: StoredRecord | undefined; schemaVersion: number }> {
    const res = await this.db.raw<{ rows: (Row & { schema_version: string })[] }>(
      `select ${COLUMNS}, ${SCHEMA_VERSION_SQL} as schema_version from records.record where id = ? and ${SCHEMA_SHARED_LOCK_SQL} for update`,
      [id],
    );
    const row = res.rows[0];
    return row ? { record: toStored(row), schemaVersion: Number(row.schema_version) } : { record: undefined, schemaVersion: -1 };
  }

  /** The links that name no live record of their type, in one statement. */
  async deadLinks(links: readonly LinkRef[]): Promise<LinkRef[]> {
    if (links.length === 0) return [];
    const res = await this.db.raw<{ rows: { i: string }[] }>(
      `select l.i from unnest(?::uuid[], ?::text[]) with ordinality l(id, t, i) where not ${LIVE_LINK_TARGET}`,
      [links.map((l) => l.id), links.map((l) => l.type)] as unknown as Knex.RawBinding[],
    );
    return res.rows.map((r) => links[Number(r.i) - 1]!);
  }

  /**
   * The links whose target is live and belongs to another project than `projectId` (a missing
   * or retired target is deadLinks' to report).
   */
  async linksOutsideProject(links: readonly LinkRef[], projectId: string | null): Promise<LinkRef[]> {
    if (links.length === 0) return [];
    const res = await this.db.raw<{ rows: { i: string }[] }>(
      `select l.i from unnest(?::uuid[]) with ordinality l(id, i)
         join records.record r on r.id = l.id
        where r.retired_at is null and r.project_id is distinct from ?::uuid`,
      [links.map((l) => l.id), projectId] as unknown as Knex.RawBinding[],
    );
    return res.rows.map((r) => links[Number(r.i) - 1]!);
  }

  /**
   * Why a guarded insert wrote nothing: the stored schema version, whether the project is live
   * and which links are dead, in one statement.
   */
  async whyNotInserted(projectId: string | null, links: readonly LinkRef[]): Promise<{ schemaVersion: number; projectLive: boolean; deadLinks: LinkRef[] }> {
    const res = await this.db.raw<{ rows: { v: string; project_live: boolean; dead: string[] | null }[] }>(
      `select ${SCHEMA_VERSION_SQL} as v,
              (?::uuid is null or exists (select 1 from records.record p
                                           where p.id = ?::uuid and p.entity_type = 'Project' and p.retired_at is null)) as project_live,
              (select array_agg(l.i) from unnest(?::uuid[], ?::text[]) with ordinality l(id, t, i) where not ${LIVE_LINK_TARGET}) as dead`,
      [projectId, projectId, links.map((l) => l.id), links.map((l) => l.type)] as unknown as Knex.RawBinding[],
    );
    const row = res.rows[0]!;
    return {
      schemaVersion: Number(row.v),
      projectLive: row.project_live,
      deadLinks: (row.dead ?? []).map((i) => links[Number(i) - 1]!),
    };
  }

  /**
   * Inserts a new live record and its outbox row in ONE statement (so one round trip, atomic
   * without an explicit transaction); created_at = updated_at = the statement's clock, which
   * also becomes the event's `occurred_at`. When `projectId` is set and is not a live Project
   * nothing is written and the result is undefined. With a `guard`, nothing is written either
   * unless the stored schema version is the guard's and every link names a live record of its
   * type: the schema the record was validated against is checked in the very statement that
   * writes it.
   *
   * The project is checked without a row lock: 32 writers taking `for share` on one Project
   * row serialise on MultiXact bookkeeping, and a Shot created while its project is being
   * retired is no different from one created a moment before (retirement is reversible).
   */
  async insertWithEvent(
    v: NewRecord,
    event: { subject: string; eventId: string; json: string } | undefined,
    guard?: WriteGuard,
    idempotency?: IdempotencyClaim,
  ): Promise<StoredRecord | undefined> {
    // Prepared once per connection: planning this statement costs PostgreSQL more than running it
    // (docs/architecture.md, "The write path and its events"). Its text is one of a few variants.
    const { text, values } = insertWithEventPgStatement(v, event, guard, idempotency);
    const [row] = await queryPrepared<Row>(this.db, text, values);
    return row ? toStored(row) : undefined;
  }

  /** Overwrites the writable columns of a row and moves its updated_at. */
  async update(id: string, v: RecordValues): Promise<StoredRecord> {
    const row = await one(
      this.db,
      `update records.record
          set project_id = ?, status = ?, active = ?, thumbnail_id = ?, data = ?::jsonb, updated_at = ${NEXT_UPDATED_AT}
        where id = ?
       returning ${COLUMNS}`,
      [v.projectId, v.status, v.active, v.thumbnailId, JSON.stringify(v.data), id],
    );
    return row!;
  }

  /** Retires (soft-deletes) or revives a row; either moves updated_at. */
  async setRetired(id: string, retired: boolean): Promise<StoredRecord> {
    const row = await one(
      this.db,
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
  async isLiveProject(id: string): Promise<boolean> {
    const res = await this.db.raw<{ rows: unknown[] }>(
      `select 1 from records.record where id = ? and entity_type = 'Project' and retired_at is null for share`,
      [id],
    );
    return res.rows.length > 0;
  }
}
