/**
 * Schema `schema`, migration 2: the actions (docs/architecture.md, "Actions"): the studio's
 * custom actions in their order (secrets sealed with SECRETS_KEY) and the one-time launch
 * requests, found by the sha256 of their token and valid until `expires_at` (database clock).
 */
import { Migration } from '@mikro-orm/migrations';

export class SchemaActionsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists schema.custom_action (
      id text primary key,
      position integer not null,
      label text not null,
      url text not null,
      entity_types text[] not null,
      roles text[] null,
      icon text null,
      secret text null,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create table if not exists schema.launch_request (
      token_hash text primary key,
      id uuid not null unique,
      user_id uuid not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`);
    this.addSql('create index if not exists launch_request_expires_idx on schema.launch_request (expires_at)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists schema.launch_request');
    this.addSql('drop table if exists schema.custom_action');
  }
}
