/**
 * Sync (docs/architecture.md, "Sync"): which record another tracker knows by which external id, and
 * which writes each source's imports made (so GET /sync/changes can leave a source's own imports out).
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsSyncMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists records.sync_mapping (
        source text not null,
        entity_type text not null,
        external_id text not null,
        id uuid not null,
        created_at timestamptz not null default clock_timestamp(),
        constraint sync_mapping_pkey primary key (source, entity_type, external_id)
      )`,
    );
    this.addSql('create index if not exists sync_mapping_id_idx on records.sync_mapping (id)');
    // One row per record write an import made: the record and the updated_at it got (which is the
    // event's created_at in the log), so an event is known as that source's own write.
    this.addSql(
      `create table if not exists records.sync_write (
        record_id uuid not null,
        updated_at timestamptz not null,
        source text not null,
        constraint sync_write_pkey primary key (record_id, updated_at)
      )`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.sync_write');
    this.addSql('drop table if exists records.sync_mapping');
  }
}
