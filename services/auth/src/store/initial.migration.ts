/**
 * The first version of schema `auth`, written by hand so the DDL is exactly what we mean.
 */
import { Migration } from '@mikro-orm/migrations';

export class AuthInitialMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "auth"."credential" (
      "user_id" uuid primary key,
      "email" text not null unique check ("email" = lower("email")),
      "password_hash" text not null,
      "created_at" timestamptz not null default now()
    )`);
    this.addSql(`create table if not exists "auth"."api_key" (
      "id" uuid primary key,
      "user_id" uuid not null,
      "name" text not null,
      "prefix" text not null,
      "key_hash" text not null unique,
      "created_at" timestamptz not null default now(),
      "last_used_at" timestamptz null,
      "revoked_at" timestamptz null
    )`);
    this.addSql(`create index if not exists "api_key_user_idx" on "auth"."api_key" ("user_id", "created_at")`);
    this.addSql(`create table if not exists "auth"."signing_key" (
      "kid" text primary key,
      "private_jwk" jsonb not null,
      "public_jwk" jsonb not null,
      "created_at" timestamptz not null default now(),
      "retired_at" timestamptz null
    )`);
    // One row per failed login, shared by every replica; rows older than the window are swept.
    this.addSql(`create table if not exists "auth"."login_failure" (
      "id" bigserial primary key,
      "email" text not null,
      "failed_at" timestamptz not null
    )`);
    this.addSql(`create index if not exists "login_failure_email_idx" on "auth"."login_failure" ("email", "failed_at" desc)`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "auth"."login_failure"');
    this.addSql('drop table if exists "auth"."signing_key"');
    this.addSql('drop table if exists "auth"."api_key"');
    this.addSql('drop table if exists "auth"."credential"');
  }
}
