/**
 * The first tables of schema `schema`: one row per definition, the version every change
 * bumps, the rename journal and the outbox of schema events.
 */
import { Migration } from '@mikro-orm/migrations';

export class SchemaInitialMigration extends Migration {
  override async up(): Promise<void> {
    // One row; locked by every change so replicas apply changes one at a time.
    this.addSql(`create table schema.state (
      id smallint primary key check (id = 1),
      version bigint not null
    )`);
    // kind: entity_type, field (code `<Type>.<field>`), status, step, priority, workflow,
    // transitions (code = the type), task_template, branding, applications, tools.
    this.addSql(`create table schema.definition (
      kind text not null,
      code text not null,
      position integer not null,
      def jsonb not null,
      updated_at timestamptz not null default now(),
      primary key (kind, code)
    )`);
    this.addSql(`create table schema.rename_journal (
      id uuid primary key,
      kind text not null,
      entity_type text not null,
      field text not null,
      from_code text not null,
      to_code text not null,
      actor uuid null,
      created_at timestamptz not null default now(),
      done_at timestamptz null,
      rewritten bigint null
    )`);
    this.addSql('create index rename_journal_pending_idx on schema.rename_journal (created_at) where done_at is null');
    this.addSql(`create table schema.outbox (
      seq bigserial primary key,
      event_id uuid not null unique,
      subject text not null,
      payload jsonb not null,
      created_at timestamptz not null default now()
    )`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists schema.outbox');
    this.addSql('drop table if exists schema.rename_journal');
    this.addSql('drop table if exists schema.definition');
    this.addSql('drop table if exists schema.state');
  }
}
