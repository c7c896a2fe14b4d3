/**
 * Schema `notifier`, migration 3: deliveries of webhook actions (docs/notifier.md, "Action
 * deliveries"). A user running a custom action queues one POST of a body the schema service
 * composed; the delivery engine sends it like a webhook delivery (signed, retried with the same
 * backoff and window, then dead). Each is its own line: no event order to keep, no webhook.
 */
import { Migration } from '@mikro-orm/migrations';

export class ActionDeliveryMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "notifier"."action_delivery" (
      "id" uuid primary key,
      "action_id" text not null,
      "url" text not null,
      "secret" text null,
      "body" text not null,
      "status" text not null default 'pending' check ("status" in ('pending', 'delivered', 'dead')),
      "attempts" integer not null default 0,
      "status_code" integer null,
      "latency_ms" integer null,
      "response" text null,
      "error" text null,
      "next_attempt_at" timestamptz null default now(),
      "first_attempt_at" timestamptz null,
      "last_attempt_at" timestamptz null,
      "delivered_at" timestamptz null,
      "claim" uuid null,
      "created_at" timestamptz not null default now()
    )`);
    this.addSql('create index if not exists "action_delivery_due_idx" on "notifier"."action_delivery" ("next_attempt_at") where "status" = \'pending\'');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "notifier"."action_delivery"');
  }
}
