/**
 * The record a create wrote, kept with its idempotency key by the statement that wrote it
 * (docs/architecture.md, "Idempotency keys, batches and summaries"): the key's answer is built
 * from it, so a create and its stored answer commit together.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsIdempotencyRecordMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table records.idempotency_key add column if not exists record jsonb');
  }

  override async down(): Promise<void> {
    this.addSql('alter table records.idempotency_key drop column if exists record');
  }
}
