/**
 * Schema `notifier`, migration 2: the creator of each remembered note, whom a reply tells when
 * the note names no `author` (docs/notifier.md, "Notification rules"). Notes remembered before it
 * keep no creator (the log is not read again): a reply to one of them tells its author only.
 */
import { Migration } from '@mikro-orm/migrations';

export class NoteCreatorMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "notifier"."note_state" add column if not exists "creator" uuid null');
  }
}
