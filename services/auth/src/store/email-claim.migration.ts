/**
 * Schema `auth`, migration 3: a User may exist before it has a password (created with
 * `POST /entities/User`), and a login address being moved to a User record is reserved in
 * `email_claim` until the record and the credential agree (docs/architecture.md, "Auth decisions").
 */
import { Migration } from '@mikro-orm/migrations';

export class EmailClaimMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "auth"."credential" alter column "password_hash" drop not null');
    this.addSql(`create table if not exists "auth"."email_claim" (
      "user_id" uuid primary key,
      "email" text not null unique check ("email" = lower("email")),
      "created_at" timestamptz not null default now()
    )`);
  }
}
