/**
 * Schema `notifier`, migration 1: where the log is followed to, what is remembered of tasks,
 * notes and users, notifications, webhooks, event bodies and deliveries (docs/notifier.md).
 */
import { Migration } from '@mikro-orm/migrations';

export class NotifierMigration extends Migration {
  override async up(): Promise<void> {
    // One row: the last log id applied, and the log's end when the notifier first started
    // (events up to it only teach the remembered state; they notify and deliver nothing).
    this.addSql(`create table if not exists "notifier"."follow_state" (
      "singleton" boolean primary key default true check ("singleton"),
      "last_event_id" bigint not null check ("last_event_id" >= 0),
      "live_from" bigint not null check ("live_from" >= 0)
    )`);
    this.addSql(`create table if not exists "notifier"."task_state" (
      "task_id" uuid primary key,
      "entity_id" uuid null,
      "assignees" uuid[] not null default '{}',
      "retired" boolean not null default false
    )`);
    this.addSql('create index if not exists "task_state_entity_idx" on "notifier"."task_state" ("entity_id") where not "retired"');
    this.addSql(`create table if not exists "notifier"."note_state" (
      "note_id" uuid primary key,
      "author" uuid null
    )`);
    this.addSql(`create table if not exists "notifier"."user_state" (
      "user_id" uuid primary key,
      "name" text null,
      "role" text null,
      "retired" boolean not null default false
    )`);
    this.addSql(`create table if not exists "notifier"."record_label" (
      "record_id" uuid primary key,
      "label" text not null
    )`);
    this.addSql(`create table if not exists "notifier"."notification" (
      "id" uuid primary key,
      "user_id" uuid not null,
      "kind" text not null,
      "record_type" text not null,
      "record_id" uuid not null,
      "event_id" bigint null,
      "actor" uuid null,
      "created_at" timestamptz not null default now(),
      "read_at" timestamptz null
    )`);
    this.addSql(
      'create unique index if not exists "notification_event_uq" on "notifier"."notification" ("user_id", "event_id", "kind") where "event_id" is not null',
    );
    this.addSql('create index if not exists "notification_user_idx" on "notifier"."notification" ("user_id", "id" desc)');
    this.addSql('create index if not exists "notification_unread_idx" on "notifier"."notification" ("user_id", "id" desc) where "read_at" is null');
    this.addSql(`create table if not exists "notifier"."webhook" (
      "id" uuid primary key,
      "url" text not null,
      "kind" text not null check ("kind" in ('webhook', 'chat')),
      "secret" text null,
      "entity_types" text[] not null default '{}',
      "actions" text[] not null default '{}',
      "active" boolean not null default true,
      "disabled_at" timestamptz null,
      "failing_since" timestamptz null,
      "line_from" bigint not null default 0,
      "created_by" uuid null,
      "created_at" timestamptz not null default now(),
      "updated_at" timestamptz not null default now()
    )`);
    // The exact bytes sent for an event (the signature of a retry is the first one's).
    this.addSql(`create table if not exists "notifier"."event_body" (
      "id" bigint primary key,
      "body" text not null,
      "chat_text" text null,
      "event_at" timestamptz not null
    )`);
    this.addSql(`create table if not exists "notifier"."delivery" (
      "id" uuid primary key,
      "webhook_id" uuid not null references "notifier"."webhook" ("id") on delete cascade,
      "event_id" bigint not null references "notifier"."event_body" ("id"),
      "entity_type" text not null,
      "entity_id" uuid not null,
      "action" text not null,
      "status" text not null default 'pending' check ("status" in ('pending', 'delivered', 'dead')),
      "attempts" integer not null default 0,
      "status_code" integer null,
      "latency_ms" integer null,
      "response" text null,
      "error" text null,
      "next_attempt_at" timestamptz null,
      "first_attempt_at" timestamptz null,
      "last_attempt_at" timestamptz null,
      "delivered_at" timestamptz null,
      "claim" uuid null,
      "created_at" timestamptz not null default now(),
      unique ("webhook_id", "event_id")
    )`);
    // The head of each webhook's line: its pending delivery with the lowest event id.
    this.addSql('create index if not exists "delivery_pending_idx" on "notifier"."delivery" ("webhook_id", "event_id") where "status" = \'pending\'');
    this.addSql('create index if not exists "delivery_list_idx" on "notifier"."delivery" ("webhook_id", "id" desc)');
    this.addSql('create index if not exists "delivery_event_idx" on "notifier"."delivery" ("event_id")');
    this.addSql('create index if not exists "delivery_dead_idx" on "notifier"."delivery" ("webhook_id") where "status" = \'dead\'');
  }
}
