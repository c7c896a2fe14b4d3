/**
 * Schema `notifier`, migration 4: the project of each notification's record, so that a user who
 * may not read a restricted project is never shown a notification about it (docs/api-notes.md,
 * "Restricted projects"). A notification written before it does not know its project
 * (`project_known` false) until the follower looks its event up in the log (ingest/project.backfill.ts);
 * until then it is left out for every caller who has a project hidden. A `webhook_disabled`
 * notification has no event and no project.
 */
import { Migration } from '@mikro-orm/migrations';

export class NotificationProjectMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "notifier"."notification" add column if not exists "project_id" uuid null');
    this.addSql('alter table "notifier"."notification" add column if not exists "project_known" boolean not null default false');
    this.addSql('update "notifier"."notification" set "project_known" = true where "event_id" is null');
    this.addSql('alter table "notifier"."notification" alter column "project_known" set default true');
    // The notifications whose project is still to be looked up, by event.
    this.addSql('create index if not exists "notification_project_unknown_idx" on "notifier"."notification" ("event_id") where not "project_known"');
  }
}
