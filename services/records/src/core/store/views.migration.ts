/**
 * Partial indexes for the work views (docs/architecture.md, "Work view indexes"): each covers
 * live records of one type only, so writes of every other type never touch it. The GIN indexes
 * skip the pending list (`fastupdate = off`): a read then never scans unmerged entries, for a
 * small cost on each Note or Task write.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsViewsMigration extends Migration {
  override async up(): Promise<void> {
    // GET /entities/{type}/{id}/notes: containment in a Note's links.
    this.addSql(
      `create index if not exists record_note_links_idx on records.record using gin ((data->'links') jsonb_path_ops) with (fastupdate = off)
        where entity_type = 'Note' and retired_at is null`,
    );
    // GET /users/{id}/tasks: containment in a Task's assignees.
    this.addSql(
      `create index if not exists record_task_assignees_idx on records.record using gin ((data->'assignees') jsonb_path_ops) with (fastupdate = off)
        where entity_type = 'Task' and retired_at is null`,
    );
    // GET /users/{id}/timesheet: one user's TimeLogs in a date range.
    this.addSql(
      `create index if not exists record_timelog_user_date_idx on records.record ((data->'user'->>'id'), (data->>'date'))
        where entity_type = 'TimeLog' and retired_at is null`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists records.record_timelog_user_date_idx');
    this.addSql('drop index if exists records.record_task_assignees_idx');
    this.addSql('drop index if exists records.record_note_links_idx');
  }
}
