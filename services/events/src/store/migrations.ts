/**
 * Hand-written migrations of the `events` schema, applied by openOrm at start-up.
 */
import { Migration } from '@mikro-orm/migrations';
import type { MigrationObject } from '@mikro-orm/postgresql';

/** The log table and the indexes behind `after=` scans and the entity_type / project_id filters. */
export class Migration0001EventLog extends Migration {
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

/**
 * The size of each row's `changes` as the service sends it (its JSON text), kept beside the
 * row so a read can stop at its byte budget without converting every candidate row.
 */
export class Migration0002ChangesBytes extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table "events"."event_log" add column if not exists "changes_bytes" integer not null generated always as (octet_length("changes"::text)) stored',
    );
  }
}

/** Every migration, oldest first. */
export const migrations: MigrationObject[] = [
  { name: 'Migration0001EventLog', class: Migration0001EventLog },
  { name: 'Migration0002ChangesBytes', class: Migration0002ChangesBytes },
];
