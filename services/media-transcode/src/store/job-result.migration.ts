/**
 * Schema `media`, migration 3: the rest of a finished job's result, so the job row alone holds the
 * transcode state and everything its Representation copies (docs/media.md, "Who owns the
 * transcode state"): `files` (original, thumbnail and proxy keys, sizes and types; the probed
 * source) of a `done` job, `error` (the reason shown) of a `failed` one. Rows finished before
 * this migration have neither; their Representations were written before them.
 */
import { Migration } from '@mikro-orm/migrations';

export class JobResultMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "media"."jobs" add column if not exists "files" jsonb null');
    this.addSql('alter table "media"."jobs" add column if not exists "error" text null');
  }
}
