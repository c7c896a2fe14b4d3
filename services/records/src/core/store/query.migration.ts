/**
 * Indexes for the common shapes of `POST /entities/{Type}/query` (docs/queries.md, "Query
 * indexes"). Every one is partial on live rows (`retired_at is null`, which every query has
 * unless an Admin asks for retired records). Expressions come from domain/filter.sql.ts,
 * so the compiled filters and these indexes are the same expressions by construction.
 */
import { Migration } from '@mikro-orm/migrations';
import { linkIdExpr, textFieldExpr } from '../domain/filter.sql.js';

/** The link fields traversed most: a hop back from the linked record finds its referrers by index. */
export const INDEXED_LINKS: readonly { type: string; field: string }[] = [
  { type: 'Shot', field: 'sequence' },
  { type: 'Task', field: 'entity' },
  { type: 'Version', field: 'entity' },
  { type: 'Version', field: 'task' },
  { type: 'Representation', field: 'version' },
  { type: 'TimeLog', field: 'task' },
];

/** Each index of this migration: its name and the statement that creates it. */
export const QUERY_INDEXES: readonly { name: string; sql: string }[] = [
  {
    // Type + status (+ project), in id order: the filter of most lists and boards, and
    // include_total over a status (an index-only count).
    name: 'record_live_type_status_project_idx',
    sql: 'create index if not exists record_live_type_status_project_idx on records.record (entity_type, status, project_id, id) where retired_at is null',
  },
  {
    // Type + project in id order: keyset pages of one project without a sort.
    name: 'record_live_type_project_id_idx',
    sql: 'create index if not exists record_live_type_project_id_idx on records.record (entity_type, project_id, id) where retired_at is null',
  },
  {
    // Equality on data fields, link equality (the reverse lookup of a known record), multi_link
    // and multi_enum any-match and type_is: all compile to `r.data @> $n::jsonb`.
    name: 'record_live_data_idx',
    sql: 'create index if not exists record_live_data_idx on records.record using gin (data jsonb_path_ops) where retired_at is null',
  },
  ...INDEXED_LINKS.map(({ type, field }) => {
    const name = `record_link_${type.toLowerCase()}_${field}_idx`;
    // `r` does not exist in an index expression: the compiler's expression over the bare table.
    const expr = linkIdExpr('record', field).replaceAll('record.data', 'data');
    return {
      name,
      // project_id second: a hop back into one project (the usual query) filters in the index, not the heap.
      sql: `create index if not exists ${name} on records.record (${expr}, project_id) where entity_type = '${type}' and retired_at is null`,
    };
  }),
  {
    // Text contains / starts_with / ends_with on `code` (every production type has one): ILIKE
    // with a trigram index.
    name: 'record_live_code_trgm_idx',
    sql: `create index if not exists record_live_code_trgm_idx on records.record using gin ((${textFieldExpr('record', 'code').replaceAll(
      'record.data',
      'data',
    )}) gin_trgm_ops) where retired_at is null`,
  },
];

export class RecordsQueryIndexesMigration extends Migration {
  override async up(): Promise<void> {
    // A trusted extension (PostgreSQL 13+): any role with CREATE on the database may create it.
    this.addSql('create extension if not exists pg_trgm');
    for (const index of QUERY_INDEXES) this.addSql(index.sql);
  }

  override async down(): Promise<void> {
    for (const index of [...QUERY_INDEXES].reverse()) this.addSql(`drop index if exists records.${index.name}`);
  }
}
