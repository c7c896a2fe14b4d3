/**
 * The link table `records.record_link` (docs/queries.md, "Link hops and the link table"): one row per
 * link a live record holds in `data`, kept in the write transaction by triggers on `records.record`,
 * so every write path (creates, updates, retire and revive, deletes, the bulk rename cascades of
 * store/rename.repository.ts) maintains it without knowing it exists.
 *
 * A row is `(from_id, link, to_id, project_id)`, each (from_id, link, to_id) once:
 * - `link` is `<from entity_type>.<data key>` for a key holding a link object, and
 *   `<from entity_type>.<data key>[]` for each object element of a key holding an array (a
 *   multi_link). One column, so its statistics are exact per kind of link.
 * - `to_id` is the object's `id` as a uuid, taken with the same pattern test the filter compiler
 *   applies (`linkIdExpr`, `SQL_UUID_RE`): an `id` that is not a uuid gives no row and never makes a
 *   write fail. The `type` of the link object is not kept: the compiled hop matches on the id and
 *   checks the linked record's own entity_type.
 * - `project_id` is the record's, so a hop into one project is a range of one index.
 * The table is a function of each live record's `(id, entity_type, project_id, data)` alone, not of
 * the schema: rows exist for every such key whatever its field type, and a query reads only the
 * kinds its schema makes link fields. Retired records have no rows; a revive puts them back.
 */
import { Migration } from '@mikro-orm/migrations';
import { SQL_UUID_RE } from '../domain/filter.sql.js';

/**
 * The lookup indexes. The trigger's deletes use `record_link_from_idx` (from_id): a plain index, not a
 * unique key, since the trigger writes each (from_id, link, to_id) once already, and a 16-byte key
 * keeps it the smallest of the three.
 */
export const LINK_INDEXES: readonly { name: string; sql: string }[] = [
  {
    // Backwards from a set of linked records: the referrers of one kind, index-only.
    name: 'record_link_to_idx',
    sql: 'create index if not exists record_link_to_idx on records.record_link (link, to_id, from_id)',
  },
  {
    // The links of one kind inside one project (the Task side of a hop filtered by project), index-only.
    name: 'record_link_project_idx',
    sql: 'create index if not exists record_link_project_idx on records.record_link (link, project_id, to_id, from_id)',
  },
];

/** The index the trigger deletes a record's rows by. */
const LINK_FROM_INDEX_SQL = 'create index if not exists record_link_from_idx on records.record_link (from_id)';

/** The triggers on records.record that keep the table. */
export const LINK_TRIGGERS = ['record_link_insert', 'record_link_update', 'record_link_delete', 'record_link_truncate'] as const;

/** The links a `data` object holds: (key, is an array element, target id). */
const LINKS_IN_SQL = `create or replace function records.record_links_in(data jsonb) returns table (field text, multi boolean, to_id uuid)
  language sql immutable parallel safe as $$
    select kv.key, false, (kv.value->>'id')::uuid
      from jsonb_each(data) kv
     where jsonb_typeof(kv.value) = 'object' and (kv.value->>'id') ~ ${SQL_UUID_RE}
    union
    select kv.key, true, (e.value->>'id')::uuid
      from jsonb_each(data) kv,
           jsonb_array_elements(case when jsonb_typeof(kv.value) = 'array' then kv.value else '[]'::jsonb end) e(value)
     where jsonb_typeof(e.value) = 'object' and (e.value->>'id') ~ ${SQL_UUID_RE}
  $$`;

/** The link rows of record `rec` (a row of records.record named so in the query). */
const linkRowsOf = (rec: string, from = '') =>
  `select ${rec}.id, ${rec}.entity_type || '.' || x.field || case when x.multi then '[]' else '' end, x.to_id, ${rec}.project_id
     from ${from}records.record_links_in(${rec}.data) x`;

/** The links of `data` as one sorted array: equal arrays, equal rows (a link's `type` rewritten by a rename changes nothing). */
const LINK_SET = (d: string) => `array(select x.field || case when x.multi then '[] ' else ' ' end || x.to_id from records.record_links_in(${d}) x order by 1)`;

const SYNC_SQL = `create or replace function records.record_link_sync() returns trigger language plpgsql as $$
  begin
    if tg_op = 'UPDATE' and old.retired_at is null and new.retired_at is null and old.entity_type = new.entity_type
       and old.project_id is not distinct from new.project_id
       and ${LINK_SET('old.data')} = ${LINK_SET('new.data')} then
      return null; -- an edit of other fields, or of a link's type only: the rows are the same
    end if;
    if tg_op in ('UPDATE', 'DELETE') then
      delete from records.record_link where from_id = old.id;
    end if;
    if tg_op in ('INSERT', 'UPDATE') and new.retired_at is null then
      insert into records.record_link (from_id, link, to_id, project_id) ${linkRowsOf('new')};
    end if;
    return null;
  end $$`;

/**
 * The insert trigger, one per statement: the rows of every record the statement inserted, from its
 * transition table, in one INSERT … SELECT (a multi-row insert — a sync import's 1,000 records — runs
 * one statement here instead of a trigger call and a statement per record).
 */
const INSERT_ROWS_SQL = `create or replace function records.record_link_insert_rows() returns trigger language plpgsql as $$
  begin
    insert into records.record_link (from_id, link, to_id, project_id) ${linkRowsOf('n', 'inserted n, ')} where n.retired_at is null;
    return null;
  end $$`;

/** Fills the table from every live record (the migration, and the bench after a bulk seed). */
export const LINK_BACKFILL_SQL = `insert into records.record_link (from_id, link, to_id, project_id)
  ${linkRowsOf('r', 'records.record r, ')} where r.retired_at is null`;

/** The triggers; an update fires only when what the rows derive from changed. */
export const LINK_TRIGGER_SQL: readonly string[] = [
  `create trigger record_link_insert after insert on records.record
     for each row when (new.retired_at is null) execute function records.record_link_sync()`,
  `create trigger record_link_update after update on records.record
     for each row when (old.data is distinct from new.data or old.retired_at is distinct from new.retired_at
       or old.entity_type is distinct from new.entity_type or old.project_id is distinct from new.project_id)
     execute function records.record_link_sync()`,
  `create trigger record_link_delete after delete on records.record
     for each row when (old.retired_at is null) execute function records.record_link_sync()`,
  `create or replace function records.record_link_clear() returns trigger language plpgsql as $$
     begin truncate records.record_link; return null; end $$`,
  `create trigger record_link_truncate after truncate on records.record
     for each statement execute function records.record_link_clear()`,
];

/**
 * For bulk loads (bench:query seeds a million records with INSERT … SELECT): `LINK_TABLE_OFF_SQL`
 * stops the triggers and empties the table and its indexes, `LINK_TABLE_ON_SQL` fills it from the
 * live records, builds the indexes and starts the triggers again. Writes committed in between are
 * not in the table until ON runs: only for a database nothing else writes to.
 */
export const LINK_TABLE_OFF_SQL: readonly string[] = [
  ...LINK_TRIGGERS.map((t) => `alter table records.record disable trigger ${t}`),
  'truncate records.record_link',
  ...LINK_INDEXES.map((i) => `drop index if exists records.${i.name}`),
  'drop index if exists records.record_link_from_idx',
];
export const LINK_TABLE_ON_SQL: readonly string[] = [
  'truncate records.record_link',
  LINK_BACKFILL_SQL,
  LINK_FROM_INDEX_SQL,
  ...LINK_INDEXES.map((i) => i.sql),
  ...LINK_TRIGGERS.map((t) => `alter table records.record enable trigger ${t}`),
  'vacuum analyze records.record_link',
];

/** The statements of the migration, in order (one transaction). */
export const LINK_TABLE_SQL: readonly string[] = [
  // No write may commit between the backfill's snapshot and the triggers: hold writes until the
  // migration commits (reads go on).
  'lock table records.record in share mode',
  `create table records.record_link (
    from_id uuid not null,
    link text not null,
    to_id uuid not null,
    project_id uuid null
  )`,
  LINKS_IN_SQL,
  SYNC_SQL,
  LINK_BACKFILL_SQL,
  // After the backfill: one sorted build instead of a probe per row inserted.
  LINK_FROM_INDEX_SQL,
  ...LINK_INDEXES.map((i) => i.sql),
  ...LINK_TRIGGER_SQL,
  'analyze records.record_link',
];

/** Migration 0013: the per-row insert trigger replaced by INSERT_ROWS_SQL (same name, same rows). */
export const LINK_INSERT_STATEMENT_SQL: readonly string[] = [
  INSERT_ROWS_SQL,
  'drop trigger if exists record_link_insert on records.record',
  `create trigger record_link_insert after insert on records.record
     referencing new table as inserted for each statement execute function records.record_link_insert_rows()`,
];

export class RecordsLinkTableMigration extends Migration {
  override async up(): Promise<void> {
    for (const sql of LINK_TABLE_SQL) this.addSql(sql);
  }

  override async down(): Promise<void> {
    for (const t of LINK_TRIGGERS) this.addSql(`drop trigger if exists ${t} on records.record`);
    this.addSql('drop function if exists records.record_link_clear()');
    this.addSql('drop function if exists records.record_link_sync()');
    this.addSql('drop table if exists records.record_link');
    this.addSql('drop function if exists records.record_links_in(jsonb)');
  }
}

export class RecordsLinkInsertStatementMigration extends Migration {
  override async up(): Promise<void> {
    for (const sql of LINK_INSERT_STATEMENT_SQL) this.addSql(sql);
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists record_link_insert on records.record');
    this.addSql(LINK_TRIGGER_SQL[0]!);
    this.addSql('drop function if exists records.record_link_insert_rows()');
  }
}
