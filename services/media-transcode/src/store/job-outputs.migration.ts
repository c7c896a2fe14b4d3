/**
 * Schema `media`, migration 2: the outputs of a job (docs/media.md, "Worker"), written by the
 * worker before the Representation becomes `done`. Guests are served the keys of the newest
 * `done` job of a version from here, never from the Representation record (docs/review.md).
 * Jobs finished before this migration have none; their outputs are found under the original's
 * prefix the first time they are asked for (domain/reviewables.ts).
 */
import { Migration } from '@mikro-orm/migrations';

export class JobOutputsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "media"."jobs" add column if not exists "review_kind" text null');
    this.addSql('alter table "media"."jobs" add column if not exists "proxy_key" text null');
    this.addSql('alter table "media"."jobs" add column if not exists "thumbnail_key" text null');
    this.addSql(`create index if not exists "jobs_done_version_idx" on "media"."jobs" ("version_id", "created_at" desc) where "state" = 'done'`);
  }
}
