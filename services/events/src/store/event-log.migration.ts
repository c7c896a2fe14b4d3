/**
 * Schema `events`, migration 1: the event log table.
 */
import { Migration } from '@mikro-orm/migrations';

/** The log table and the indexes behind `after=` scans and the entity_type / project_id filters. */
export class EventLogMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "events"."event_log" (
      "id" bigint primary key check ("id" > 0),
      "event_id" uuid not null unique,
      "entity_type" text not null,
      "entity_id" uuid not null,
      "project_id" uuid null,
      "action" text not null check ("action" in ('create', 'update', 'delete')),
      "actor" uuid null,
      "changes" jsonb not null default '{}'::jsonb,
      "created_at" timestamptz not null,
      "logged_at" timestamptz not null default now()
    )`);
    this.addSql('create index if not exists "event_log_entity_type_id_idx" on "events"."event_log" ("entity_type", "id")');
    this.addSql('create index if not exists "event_log_project_id_id_idx" on "events"."event_log" ("project_id", "id")');
  }
}
