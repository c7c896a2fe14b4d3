/**
 * Schema `auth`, migration 2: a login attempt is reserved (pending) before its password is
 * checked, and only a wrong password leaves it counted as a failure.
 */
import { Migration } from '@mikro-orm/migrations';

/** Rows may be reservations still being checked; only settled ones are failures. */
export class LoginAttemptPendingMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "auth"."login_failure" add column if not exists "pending" boolean not null default false');
  }
}
