/**
 * Schema `media`, migration 4: `copied_state`, the state of a finished job last copied to its
 * Representation (docs/media.md, "Who owns the transcode state"). A `done` or `failed` row whose
 * copy is behind is published again by the sweeper, and the worker only sends the copy. Rows
 * finished before this migration had their copy written before their row: they count as copied.
 */
import { Migration } from '@mikro-orm/migrations';

export class JobCopiedMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "media"."jobs" add column if not exists "copied_state" text null');
    this.addSql(`update "media"."jobs" set "copied_state" = "state" where "state" in ('done', 'failed') and "copied_state" is null`);
  }
}
