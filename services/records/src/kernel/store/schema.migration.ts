/**
 * The schema records validates against and the renames it has applied (docs/architecture.md,
 * "Records obey the schema"): `schema_state` holds one row, the newest snapshot the schema service applied;
 * `applied_rename` remembers each rename journal entry once, with the number of records it rewrote.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsSchemaMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists records.schema_state (
      id smallint primary key default 1,
      version bigint not null,
      snapshot jsonb not null,
      applied_at timestamptz not null default now(),
      constraint schema_state_one_row check (id = 1)
    )`);
    this.addSql(`create table if not exists records.applied_rename (
      journal_id text primary key,
      kind text not null,
      from_code text not null,
      to_code text not null,
      rewritten bigint not null,
      applied_at timestamptz not null default now()
    )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.applied_rename');
    this.addSql('drop table if exists records.schema_state');
  }
}
