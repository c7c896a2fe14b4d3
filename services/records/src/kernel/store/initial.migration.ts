/**
 * The first schema of `records`: the universal record table and the outbox.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsInitialMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table records.record (
      id uuid primary key,
      entity_type text not null,
      project_id uuid null,
      status text null,
      active boolean not null default true,
      thumbnail_id uuid null,
      created_by uuid null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      retired_at timestamptz null,
      data jsonb not null default '{}'::jsonb,
      constraint record_data_is_object check (jsonb_typeof(data) = 'object')
    )`);
    this.addSql('create index record_entity_type_idx on records.record (entity_type)');
    this.addSql('create index record_project_id_idx on records.record (project_id)');
    this.addSql('create index record_status_idx on records.record (status)');
    this.addSql('create index record_active_idx on records.record (active)');
    // Live rows of one type in id (= creation, UUID v7) order: the shape of most reads and
    // of keyset pages; retired rows stay out of it.
    this.addSql('create index record_live_type_id_idx on records.record (entity_type, id) where retired_at is null');
    this.addSql('create index record_live_project_type_idx on records.record (project_id, entity_type) where retired_at is null');

    this.addSql(`create table records.outbox (
      seq bigserial primary key,
      event_id uuid not null unique,
      subject text not null,
      payload jsonb not null,
      created_at timestamptz not null default now()
    )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.outbox');
    this.addSql('drop table if exists records.record');
  }
}
