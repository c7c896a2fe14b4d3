/**
 * Schema `media`, migration 1: transcode jobs (one per upload, also the outbox of the TRANSCODE
 * stream) and their attempts.
 */
import { Migration } from '@mikro-orm/migrations';

export class JobsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "media"."jobs" (
      "id" uuid primary key,
      -- Null while the upload is creating its Representation (a reservation the sweeper can finish).
      "representation_id" uuid null unique,
      "version_id" uuid not null,
      "project_id" uuid null,
      "original_key" text not null,
      "original_size" bigint not null check ("original_size" >= 0),
      "content_type" text not null,
      "file_name" text not null,
      "state" text not null default 'queued' check ("state" in ('creating', 'queued', 'processing', 'done', 'failed')),
      "published_at" timestamptz null,
      "lease_owner" text null,
      "lease_until" timestamptz null,
      "created_at" timestamptz not null default clock_timestamp(),
      "updated_at" timestamptz not null default clock_timestamp()
    )`);
    this.addSql('create index if not exists "jobs_version_id_created_at_idx" on "media"."jobs" ("version_id", "created_at" desc)');
    this.addSql(`create index if not exists "jobs_unpublished_idx" on "media"."jobs" ("created_at") where "published_at" is null and "state" <> 'creating'`);
    this.addSql(`create index if not exists "jobs_creating_idx" on "media"."jobs" ("created_at") where "state" = 'creating'`);
    this.addSql(`create index if not exists "jobs_unfinished_idx" on "media"."jobs" ("updated_at") where "state" in ('queued', 'processing')`);
    this.addSql(`create table if not exists "media"."attempts" (
      "job_id" uuid not null references "media"."jobs" ("id") on delete cascade,
      "stream_seq" bigint not null,
      "delivery" integer not null check ("delivery" > 0),
      "attempt" integer not null check ("attempt" > 0),
      "worker" text not null,
      "started_at" timestamptz not null default clock_timestamp(),
      "finished_at" timestamptz null,
      "outcome" text null check ("outcome" in ('done', 'failed', 'retry', 'interrupted')),
      "error" text null,
      primary key ("job_id", "stream_seq", "delivery")
    )`);
  }
}
