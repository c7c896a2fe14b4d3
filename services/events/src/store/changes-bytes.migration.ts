/**
 * Schema `events`, migration 2: each row's `changes` size, for the byte budget of a page.
 */
import { Migration } from '@mikro-orm/migrations';

/**
 * The size of each row's `changes` as the service sends it (its JSON text), kept beside the
 * row so a read can stop at its byte budget without converting every candidate row.
 */
export class ChangesBytesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table "events"."event_log" add column if not exists "changes_bytes" integer not null generated always as (octet_length("changes"::text)) stored',
    );
  }
}
