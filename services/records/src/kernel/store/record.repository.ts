/**
 * SQL for the `record` table. A repository is bound to the connection or the transaction it runs
 * on when it is built (knex.record.store.ts builds one per transaction), so the domain decides what
 * shares a transaction. Timestamps leave PostgreSQL already
 * formatted with microseconds: a JS Date would cut them to milliseconds and break ETags.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { pgPlaceholders, queryPrepared, sqlIsoMicros } from '@reelbase/lib-platform';
import type { IdempotencyClaim, NewRecord, ProjectState, RecordValues, StoredRecord } from '../domain/record.ports.js';
import type { ClientRecord } from '../domain/record.types.js';
import type { LinkRef } from '../domain/schema.validator.js';
import type { Db } from './knex.db.js';
import { recordsOutbox, stampedPayload } from './outbox.repository.js';
import { SCHEMA_SHARED_LOCK_SQL, SCHEMA_VERSION_SQL } from './schema.repository.js';
import type { WriteGuard } from '../domain/record.ports.js';
import { andReadable, readableBound } from './reader.condition.js';

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

/**
 * Live records of the link's type, as a condition on `l.id` and `l.t`; `also` (` and ...`) adds a
 * condition on the target row `x`: the reader rule, for a writer who may not read every project
 * (a target they may not read is as dead as a missing one: docs/api-notes.md, "Restricted projects").
 */
export function liveLinkTarget(also = ''): string {
  return `exists (select 1 from records.record x where x.id = l.id and x.entity_type = l.t and x.retired_at is null${also})`;
}

/** {@link liveLinkTarget} for a writer who reads every project. */
export const LIVE_LINK_TARGET = liveLinkTarget();

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
  // A writer who may not read every project writes into, and links to, only what they may read.
  const project = andReadable('p', guard?.reader);
  const target = andReadable('x', guard?.reader);
  const guardSql =
    guard === undefined
      ? ''
      : `and ${SCHEMA_SHARED_LOCK_SQL} and ${SCHEMA_VERSION_SQL} = ?::bigint` +
        (guard.links.length > 0 ? ` and not exists (select 1 from unnest(?::uuid[], ?::text[]) l(id, t) where not ${liveLinkTarget(target.sql)})` : '');
  const guardParams: unknown[] =
    guard === undefined
      ? []
      : guard.links.length > 0
        ? [guard.schemaVersion, guard.links.map((l) => l.id), guard.links.map((l) => l.type), ...target.bindings]
        : [guard.schemaVersion];
  return {
    sql: `with c as (select clock_timestamp() as ts),
     r as (
       insert into records.record
         (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
       select ?, ?, ?::uuid, ?, ?, ?, ?, c.ts, c.ts, ?::jsonb from c
        where (?::uuid is null
           or exists (select 1 from records.record p
                       where p.id = ?::uuid and p.entity_type = 'Project' and p.retired_at is null${project.sql}))
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
      ...project.bindings,
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

  /**
   * The row with `id`, retired or not; `lock` takes a row lock for the rest of the transaction.
   * With `reader` (membershipOf's user id), a row in a project they may not read is not found.
   */
  find(id: string, lock = false, reader?: string | null): Promise<StoredRecord | undefined> {
    const readable = andReadable('record', reader);
    return one(this.db, `select ${COLUMNS} from records.record where id = ?${readable.sql}${lock ? ' for update' : ''}`, [id, ...readable.bindings]);
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
   * With `reader`, a row in a project they may not read is no row.
   */
  async lockWithSchemaVersion(id: string, reader?: string | null): Promise<{ record: StoredRecord | undefined; schemaVersion: number }> {
    const readable = andReadable('record', reader);
    const res = await this.db.raw<{ rows: (Row & { schema_version: string })[] }>(
      `select ${COLUMNS}, ${SCHEMA_VERSION_SQL} as schema_version from records.record where id = ?${readable.sql} and ${SCHEMA_SHARED_LOCK_SQL} for update`,
      [id, ...readable.bindings],
    );
    const row = res.rows[0];
    return row ? { record: toStored(row), schemaVersion: Number(row.schema_version) } : { record: undefined, schemaVersion: -1 };
  }

  /** The links that name no live record of their type (or, with `reader`, none they may read), in one statement. */
  async deadLinks(links: readonly LinkRef[], reader?: string | null): Promise<LinkRef[]> {
    if (links.length === 0) return [];
    const readable = andReadable('x', reader);
    const res = await this.db.raw<{ rows: { i: string }[] }>(
      `select l.i from unnest(?::uuid[], ?::text[]) with ordinality l(id, t, i) where not ${liveLinkTarget(readable.sql)}`,
      [links.map((l) => l.id), links.map((l) => l.type), ...readable.bindings] as unknown as Knex.RawBinding[],
    );
    return res.rows.map((r) => links[Number(r.i) - 1]!);
  }

  /**
   * The links whose target is live and belongs to another project than `projectId` (a missing
   * or retired target, or with `reader` one they may not read, is deadLinks' to report).
   */
  async linksOutsideProject(links: readonly LinkRef[], projectId: string | null, reader?: string | null): Promise<LinkRef[]> {
    if (links.length === 0) return [];
    const readable = andReadable('r', reader);
    const res = await this.db.raw<{ rows: { i: string }[] }>(
      `select l.i from unnest(?::uuid[]) with ordinality l(id, i)
         join records.record r on r.id = l.id
        where r.retired_at is null and r.project_id is distinct from ?::uuid${readable.sql}`,
      [links.map((l) => l.id), projectId, ...readable.bindings] as unknown as Knex.RawBinding[],
    );
    return res.rows.map((r) => links[Number(r.i) - 1]!);
  }

  /**
   * Why a guarded insert wrote nothing: the stored schema version, whether the project is live,
   * whether it is one `reader` may not read, and which links are dead (to `reader`), in one statement.
   */
  async whyNotInserted(
    projectId: string | null,
    links: readonly LinkRef[],
    reader?: string | null,
  ): Promise<{ schemaVersion: number; projectLive: boolean; projectHidden: boolean; deadLinks: LinkRef[] }> {
    const project = andReadable('p', reader);
    const target = andReadable('x', reader);
    const live = `select 1 from records.record p where p.id = ?::uuid and p.entity_type = 'Project' and p.retired_at is null`;
    const res = await this.db.raw<{ rows: { v: string; project_live: boolean; project_hidden: boolean; dead: string[] | null }[] }>(
      `select ${SCHEMA_VERSION_SQL} as v,
              (?::uuid is null or exists (${live})) as project_live,
              ${project.sql ? `(exists (${live}) and not exists (${live}${project.sql}))` : 'false'} as project_hidden,
              (select array_agg(l.i) from unnest(?::uuid[], ?::text[]) with ordinality l(id, t, i) where not ${liveLinkTarget(target.sql)}) as dead`,
      [
        projectId,
        projectId,
        ...(project.sql ? [projectId, projectId, ...project.bindings] : []),
        links.map((l) => l.id),
        links.map((l) => l.type),
        ...target.bindings,
      ] as unknown as Knex.RawBinding[],
    );
    const row = res.rows[0]!;
    return {
      schemaVersion: Number(row.v),
      projectLive: row.project_live,
      projectHidden: row.project_hidden,
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
   * Whether `id` is a live Project, and with `reader` whether they may read it: `live` (readable),
   * `hidden` (live, but not theirs to read) or `missing`. `for share` keeps a concurrent transaction
   * from retiring the project until this one commits (`for key share` would not: retiring changes no key).
   */
  async projectState(id: string, reader?: string | null): Promise<ProjectState> {
    const readable = readableBound('record', reader) ?? { sql: 'true', bindings: [] };
    const res = await this.db.raw<{ rows: { readable: boolean }[] }>(
      `select ${readable.sql} as readable from records.record where id = ? and entity_type = 'Project' and retired_at is null for share`,
      [...readable.bindings, id],
    );
    const row = res.rows[0];
    return row === undefined ? 'missing' : row.readable ? 'live' : 'hidden';
  }
}
