/**
 * Who holds each idempotency key (docs/api-notes.md, "Idempotent retries"): a principal holds a
 * bounded number of live keys, counted through this index when a new key is claimed. Keys kept
 * before this column existed have none and are not counted; they expire within a day.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsIdempotencyPrincipalMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table records.idempotency_key add column if not exists principal text');
    this.addSql('create index if not exists idempotency_key_principal_idx on records.idempotency_key (principal, expires_at) where principal is not null');
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists records.idempotency_key_principal_idx');
    this.addSql('alter table records.idempotency_key drop column if exists principal');
  }
}
