/**
 * The reads of the work views (domain/record.views.ts): each is one statement over live records
 * of one type, answered from a partial index of views.migration.ts (docs/architecture.md,
 * "Work view indexes"). Every value is bound.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { Db } from '../../kernel/store/knex.db.js';
import { COLUMNS, toStored, type Row } from '../../kernel/store/record.repository.js';
import { RESTRICTED_PROJECTS_SQL } from '../../kernel/store/project.readers.sql.js';
import type { RestrictedProject } from '../../kernel/domain/project.readers.js';

async function many(db: Db, sql: string, params: readonly unknown[]): Promise<StoredRecord[]> {
  const res = await db.raw<{ rows: Row[] }>(sql, params as Knex.RawBinding[]);
  return res.rows.map(toStored);
}

/** `[{"type": type, "id": id}]`: the jsonb a multi_link must contain to name that record. */
const linkArray = (type: string, id: string): string => JSON.stringify([{ type, id }]);

/** Notes linking a record; binds `[{"type","id"}]` as JSON. */
export const NOTES_SQL = `select ${COLUMNS} from records.record
  where entity_type = 'Note' and retired_at is null and data->'links' @> ?::jsonb
  order by record.created_at, id`;

/** Tasks assigned to a user; binds `[{"type":"User","id"}]` as JSON. */
export const TASKS_SQL = `select ${COLUMNS} from records.record
  where entity_type = 'Task' and retired_at is null and data->'assignees' @> ?::jsonb
  order by record.created_at, id`;

/** A user's TimeLogs in a date range; binds the user id, then from and to (`YYYY-MM-DD`). */
export const TIMELOGS_SQL = `select ${COLUMNS} from records.record
  where entity_type = 'TimeLog' and retired_at is null
    and (data->'user'->>'id') = ? and (data->>'date') between ? and ?
  order by data->>'date', record.created_at, id`;

/** Statements of the work views. */
export class ViewsRepository {
  constructor(private readonly db: Db) {}

  /** Live Notes whose `data.links` contain the record, oldest first (record_note_links_idx). */
  notesLinking(type: string, id: string): Promise<StoredRecord[]> {
    return many(this.db, NOTES_SQL, [linkArray(type, id)]);
  }

  /** Live Tasks whose `data.assignees` contain the User, oldest first (record_task_assignees_idx). */
  tasksAssignedTo(userId: string): Promise<StoredRecord[]> {
    return many(this.db, TASKS_SQL, [linkArray('User', userId)]);
  }

  /**
   * Live TimeLogs of the User dated within [from, to] (record_timelog_user_date_idx). Dates are
   * stored as `YYYY-MM-DD` text, so text order is date order.
   */
  timeLogsOf(userId: string, from: string, to: string): Promise<StoredRecord[]> {
    return many(this.db, TIMELOGS_SQL, [userId, from, to]);
  }

  /** Every restricted project with its member ids (record_restricted_project_idx). */
  async restrictedProjects(): Promise<RestrictedProject[]> {
    const res = await this.db.raw<{ rows: Array<{ id: string; member_ids: string[] }> }>(RESTRICTED_PROJECTS_SQL);
    return res.rows.map((r) => ({ id: r.id, memberIds: r.member_ids }));
  }
}
