/**
 * The restricted projects, found without reading every Project (kernel/store/project.readers.sql.ts):
 * a partial index whose predicate is the rule's own.
 */
import { Migration } from '@mikro-orm/migrations';

export class RecordsRestrictedProjectsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists record_restricted_project_idx on records.record (id)
         where entity_type = 'Project' and (data->>'restricted') = 'true'`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists records.record_restricted_project_idx');
  }
}
