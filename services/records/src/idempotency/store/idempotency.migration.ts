/**
 * Idempotency keys (docs/architecture.md, "Idempotency keys"): one row per key scope (principal,
 * method, concrete path and key, hashed by the gateway), the hash of the body first sent with it,
 * and once the request finished the answer it got. Rows past `expires_at` are swept.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsIdempotencyMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists records.idempotency_key (
        scope text not null,
        body_hash text not null,
        claim uuid not null,
        lease_until timestamptz not null,
        expires_at timestamptz not null,
        status integer,
        headers jsonb,
        body text,
        created_at timestamptz not null default clock_timestamp(),
        constraint idempotency_key_pkey primary key (scope)
      )`,
    );
    this.addSql('create index if not exists idempotency_key_expires_idx on records.idempotency_key (expires_at)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists records.idempotency_key');
  }
}
