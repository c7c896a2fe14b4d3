/**
 * Schema `schema`, migration 5: who a schedule runs as (docs/scheduler.md, "Who a run acts as").
 * `schedule.updated_by` is the Admin who last created or changed the schedule, the user each run
 * acts as (a schedule written before it runs as its creator, copied here); `schedule_run.requested_by`
 * is the Admin who asked for a run now (null for the clock's runs). The index on `started_at`
 * finds the runs past their retention ("Limits").
 */
import { Migration } from '@mikro-orm/migrations';

export class SchemaSchedulePrincipalMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table schema.schedule add column if not exists updated_by uuid null');
    this.addSql('update schema.schedule set updated_by = created_by where updated_by is null');
    this.addSql('alter table schema.schedule_run add column if not exists requested_by uuid null');
    this.addSql('create index if not exists schedule_run_started_idx on schema.schedule_run (started_at)');
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists schema.schedule_run_started_idx');
    this.addSql('alter table schema.schedule_run drop column if exists requested_by');
    this.addSql('alter table schema.schedule drop column if exists updated_by');
  }
}
