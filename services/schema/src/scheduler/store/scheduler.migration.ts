/**
 * Schema `schema`, migration 4: the scheduler (docs/scheduler.md): the schedules (a webhook
 * target's secret sealed with SECRETS_KEY) and their runs. A run is unique per schedule and
 * `scheduled_for`: that constraint, not a leader, makes each occurrence run once however many
 * replicas tick. Due schedules are found by `next_run_at` among the active ones; runs are listed
 * newest first by `started_at`, then id.
 */
import { Migration } from '@mikro-orm/migrations';

export class SchemaSchedulerMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists schema.schedule (
      id uuid primary key,
      name text not null,
      cron text not null,
      timezone text not null,
      target jsonb not null,
      secret text null,
      active boolean not null,
      catch_up text not null check (catch_up in ('skip', 'once')),
      next_run_at timestamptz null,
      created_by uuid null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql('create index if not exists schedule_due_idx on schema.schedule (next_run_at) where active');
    this.addSql(`create table if not exists schema.schedule_run (
      id uuid primary key,
      schedule_id uuid not null references schema.schedule (id) on delete cascade,
      scheduled_for timestamptz not null,
      started_at timestamptz not null,
      status text not null check (status in ('ok', 'failed')),
      result jsonb null,
      error text null,
      constraint schedule_run_once unique (schedule_id, scheduled_for)
    )`);
    this.addSql('create index if not exists schedule_run_list_idx on schema.schedule_run (schedule_id, started_at desc, id desc)');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists schema.schedule_run');
    this.addSql('drop table if exists schema.schedule');
  }
}
